import Foundation
import GPSDLocation
import GPSDTestSupport
import Testing

/// `satelliteUpdates()` against a real gpsd playing a receiver of four systems (`multignss.nmea`).
@Suite("Satellites from a real gpsd", .enabled(if: GPSFake.isAvailable), .serialized, .liveSuite, .timeLimit(.minutes(1)))
struct LiveSatelliteTests {
    /// The place and signal of each satellite, in order: what gpsd copies from the NMEA unchanged.
    private static func signature(_ satellites: [Satellite]) -> [[Double?]] {
        satellites.map { [$0.elevation, $0.azimuth, $0.signalStrength] }
    }

    private static func signature(_ epoch: ExpectedSky) -> [[Double?]] {
        epoch.satellites.map { [$0.elevation, $0.azimuth, $0.signal] }
    }

    @Test("satelliteUpdates() lists every satellite of every system with the elevation, azimuth and signal gpsd reported")
    func everySatelliteOfEverySystem() async throws {
        let epochs = try ExpectedSky.load("multignss.sky.expected.json")
        let signatures = epochs.map(Self.signature)
        try #require(Set(signatures).count == epochs.count, "each epoch's C/N0 tells it apart")
        // How gpsd 3.22 named each satellite and marked it used (the recording): a gpsd may do as the NMEA means,
        // or as 3.22 did (make-fixtures.py lists where 3.22 departs from the NMEA).
        let recorded = try MultiGNSSRecording.completeViews()
        try #require(recorded.count == epochs.count)

        // gpsd stays up after the log, so the last epoch's view comes however late; the body ends at it.
        let views = try await GPSFake.run(logs: [Fixtures.url("multignss.nmea")], cycle: 0.02, once: true,
                                          lingerAfterEnd: 60, waitForClient: true) { fake in
            let gps = AsyncLocationManager(server: try GPSDServer(parsing: fake.server))
            let skies = gps.satelliteUpdates()   // made before the watch starts, so no view is missed
            let fixes = Task { for try await _ in gps.updates(bufferingPolicy: .unbounded) {} }   // the watch
            defer { fixes.cancel() }
            var views: [SkyView] = []
            for await view in skies {
                views.append(view)
                if Self.signature(view.satellites) == signatures.last { break }
            }
            await gps.stop()
            return views
        }

        // A live stream keeps the newest view for a consumer that lags, so some epochs may be skipped; every
        // complete view must be one of the log's epochs, in order, and the last one must come. gpsd 3.22 sends one
        // complete view an epoch; 3.25 sends it again after the GGA and each GSA, with their DOPs.
        let isGPSD322 = ReportDecoder.libgpsAPIVersion == 11
        let complete = views.filter { $0.satellites.count == epochs[0].satellites.count }
        let indices = complete.compactMap { signatures.firstIndex(of: Self.signature($0.satellites)) }
        #expect(indices.count == complete.count, "every complete view is an epoch of the log")
        #expect(indices == indices.sorted() && (!isGPSD322 || Set(indices).count == indices.count),
                "in order, each once from gpsd 3.22: \(indices)")
        #expect(indices.last == epochs.count - 1)
        for (view, index) in zip(complete, indices) {
            let epoch = epochs[index], gpsd322 = recorded[index]
            #expect(view.visible == epoch.visible)
            #expect(view.device?.hasPrefix("/dev/") == true)
            for (position, satellite) in view.satellites.enumerated() {
                let expected = epoch.satellites[position], old = gpsd322.satellites[position]
                let name = (satellite.constellation.rawValue, satellite.id, satellite.prn)
                #expect(name == (expected.constellation, expected.id, expected.prn)
                        || name == (old.constellation.rawValue, old.id, old.prn),
                        "\(epoch.time): \(satellite) is \(expected.constellation) \(expected.id)")
                #expect(satellite.isUsed == expected.used || satellite.isUsed == old.isUsed,
                        "\(epoch.time): \(satellite)")
            }
            // gpsd 3.25's SKY after a GGA gives the next epoch's used count and the HDOP alone: the view keeps the
            // list's count and the factors the report lacks.
            #expect(view.used == view.satellites.count(where: \.isUsed), "\(view.used) used")
            #expect(view.dilution.horizontal == 0.71 && view.dilution.position == 1.32 && view.dilution.vertical == 1.11,
                    "\(view.dilution)")
        }
        // Views before a complete one hold the systems whose GSV sets came so far (gpsd 3.22 reports after each).
        for view in views where view.satellites.count < epochs[0].satellites.count {
            #expect(signatures.contains { Array($0.prefix(view.satellites.count)) == Self.signature(view.satellites) },
                    "\(view.satellites.count) satellites")
        }
    }
}

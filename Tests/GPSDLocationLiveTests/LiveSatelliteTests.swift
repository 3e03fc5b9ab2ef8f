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

    @Test("satelliteUpdates() gives one whole view an epoch: every satellite of every system, stamped with the epoch's time")
    func oneWholeViewAnEpoch() async throws {
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

        // gpsd 3.22 sends 3 or 4 SKYs an epoch, each listing a system more, and 3.25 4 more without a list; each
        // epoch comes once, whole. gpsd 3.22 reports every epoch of the log; 3.25 gives its first fixes no time and
        // may merge or miss an epoch at the start.
        let isGPSD322 = ReportDecoder.libgpsAPIVersion == 11
        let indices = views.map { view in signatures.firstIndex(of: Self.signature(view.satellites)) }
        #expect(indices.allSatisfy { $0 != nil }, "every view is a whole epoch of the log: \(views.map(\.satellites.count))")
        let found = indices.compactMap { $0 }
        #expect(found == Array((found.first ?? 0)...(epochs.count - 1)), "each epoch once, in order: \(found)")
        if isGPSD322 { #expect(found == Array(0..<epochs.count), "as many views as epochs") } else { #expect(found.count >= epochs.count - 2) }
        for (position, (view, index)) in zip(views, found).enumerated() {
            let epoch = epochs[index], gpsd322 = recorded[index]
            #expect(view.visible == epoch.visible)
            #expect(view.constellations.map(\.constellation) == [.gps, .sbas, .galileo, .beidou, .qzss, .glonass])
            #expect(view.constellations.map(\.used).reduce(0, +) == view.used)
            #expect(view.device?.hasPrefix("/dev/") == true)
            // Stamped with its epoch's fix time; gpsd 3.25's first fixes have none.
            let time = GPSDTime.date(from: epoch.time)
            #expect(view.timestamp == time || (!isGPSD322 && position == 0 && view.timestamp == nil),
                    "\(epoch.time): \(String(describing: view.timestamp))")
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
    }
}

import Foundation
import GPSDLocation
import GPSDTestSupport
import Testing

extension WhereAmIProcessTests {
    /// `whereami --sky` as a process against a real gpsd playing a receiver of four systems (`multignss.nmea`).
    @Suite("whereami --sky against a real gpsd", .enabled(if: GPSFake.isAvailable), .timeLimit(.minutes(1)))
    struct LiveSkyTests {
        @Test("--sky --format json -q prints one object listing every satellite with the place and signal gpsd reported")
        func skyJSON() async throws {
            let epochs = try ExpectedSky.load("multignss.sky.expected.json")
            let recorded = try MultiGNSSRecording.completeViews()   // gpsd 3.22's names and use
            try await withGPSFake("multignss.nmea", cycle: 0.02, once: false) { fake in
                let result = try await whereami("--sky", "--format", "json", "-q", fake.server)
                #expect(result.stderr.isEmpty, "--quiet: nothing on stderr, got \(result.stderr)")
                guard await requireLive(result.status == 0 && !result.endedBySignal && result.stdoutLines.count == 1,
                                        "exit 0 after one line: \(result)", fake: fake) else { return }
                #expect(!result.stdout.contains("null") && !result.stdout.lowercased().contains("nan"))
                let sky = try JSONDecoder().decode(SkyView.self, from: Data(result.stdoutLines[0].utf8))
                #expect(result.stdoutLines[0] == sky.jsonText, "the documented form, keys in order")
                // The whole epoch, all four systems: one of the log's epochs, by its C/N0.
                let places = sky.satellites.map { [$0.elevation, $0.azimuth, $0.signalStrength] }
                let index = try #require(epochs.firstIndex { $0.satellites.map { [$0.elevation, $0.azimuth, $0.signal] } == places },
                                         "an epoch of the log: \(result.stdout)")
                let (epoch, old) = (epochs[index], recorded[index])
                #expect(sky.visible == epoch.visible && sky.satellites.count == epoch.satellites.count)
                #expect(Set(sky.satellites.map(\.constellation)) == [.gps, .sbas, .qzss, .glonass, .galileo, .beidou])
                for (position, satellite) in sky.satellites.enumerated() {
                    let expected = epoch.satellites[position], gpsd322 = old.satellites[position]
                    let name = (satellite.constellation.rawValue, satellite.id, satellite.prn)
                    #expect(name == (expected.constellation, expected.id, expected.prn)
                            || name == (gpsd322.constellation.rawValue, gpsd322.id, gpsd322.prn), "\(satellite)")
                    #expect(satellite.isUsed == expected.used || satellite.isUsed == gpsd322.isUsed, "\(satellite)")
                }
                // gpsd 3.22 gives the receiver's DOPs and counts the list's used; 3.25 takes each GSA's count used
                // and DOPs as they come (see LiveSatelliteTests).
                if ReportDecoder.libgpsAPIVersion == 11 {
                    #expect(sky.used == sky.satellites.count(where: \.isUsed))
                    #expect(sky.dilution.horizontal == 0.71 && sky.dilution.position == 1.32)
                } else {
                    #expect(Set(epochs.map(\.used)).contains(sky.used), "\(sky.used) used")
                    #expect(sky.dilution.horizontal != nil && sky.dilution.position != nil, "\(sky.dilution)")
                }
            }
        }

        @Test("--sky prints a table: the counts, in all and per system, then a row per satellite of every system")
        func skyText() async throws {
            try await withGPSFake("multignss.nmea", cycle: 0.02, once: false) { fake in
                let result = try await whereami("--sky", fake.server)
                guard await requireLive(result.status == 0 && !result.endedBySignal, "exit 0: \(result)", fake: fake)
                else { return }
                #expect(result.stderr.contains("waiting for the satellites"), "\(result.stderr)")
                let lines = result.stdoutLines
                #expect(lines.first?.hasPrefix("Satellites: ") == true && lines.first?.contains("of 26 visible") == true)
                let systems = try #require(lines.first { $0.hasPrefix("Systems: ") }, "\(result.stdout)")
                #expect(["GPS", "SBAS", "Galileo", "BeiDou", "QZSS", "GLONASS"].allSatisfy { systems.contains(" \($0) ") },
                        "each system's counts: \(systems)")
                let header = try #require(lines.firstIndex { $0.hasPrefix("System ") }, "\(result.stdout)")
                #expect(lines[header].split(separator: " ") == ["System", "ID", "PRN", "Elev", "Azim", "C/N0", "Used", "Health"])
                let rows = lines[(header + 1)...].map { $0.split(separator: " ").map(String.init) }
                #expect(rows.count == 26)
                #expect(Set(rows.compactMap(\.first)) == ["GPS", "SBAS", "QZSS", "GLONASS", "Galileo", "BeiDou"])
                #expect(rows.first == ["GPS", "2", "2", "63", "95", rows.first?[5] ?? "", "yes", "-"])
            }
        }

        @Test("--sky with no satellites before --timeout exits 75")
        func skyTimesOut() async throws {
            try await withGPSFake("nofix.nmea", once: false) { fake in
                let result = try await whereami("--sky", "--timeout", "1", fake.server)
                #expect(result.status == 75, "\(result)")
                #expect(result.stdout.isEmpty)
                #expect(result.stderr.contains("no satellites within 1.0 s"), "\(result.stderr)")
            }
        }
    }
}

import Foundation
import GPSDLocation
import GPSDTestSupport
import Testing

/// Debian's node_exporter (Scripts/install-dependencies installs it).
private let nodeExporter = "/usr/bin/prometheus-node-exporter"

extension SampleTests {
    @Suite("FleetHealth", .enabled(if: FileManager.default.isExecutableFile(atPath: nodeExporter)))
    struct FleetHealthTests {
        /// The `gpsd_*` samples of a Prometheus text exposition, by name with labels: `gpsd_fix_mode{server="…"}`.
        static func samples(_ exposition: String) -> [String: Double] {
            var values: [String: Double] = [:]
            for line in exposition.split(separator: "\n") where line.hasPrefix("gpsd_") {
                guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
                values[String(line[..<space])] = value
            }
            return values
        }

        /// What node_exporter serves now, read over HTTP off the cooperative pool.
        static func scrape(_ port: UInt16) async -> [String: Double] {
            await withCheckedContinuation { continuation in
                Thread.detachNewThread { continuation.resume(returning: samples(httpGet(port: port, path: "/metrics") ?? "")) }
            }
        }

        /// Scrapes until `condition` holds (at most `timeout`); the last scrape.
        static func scrape(_ port: UInt16, timeout: Duration = .seconds(30),
                           until condition: ([String: Double]) -> Bool) async -> [String: Double] {
            let deadline = ContinuousClock.now + timeout
            var values = await scrape(port)
            while !condition(values) && ContinuousClock.now < deadline {
                try? await Task.sleep(for: .milliseconds(200))
                values = await scrape(port)
            }
            return values
        }

        @Test("a real node_exporter serves what FleetHealth wrote: fix mode, satellites, accuracy, age, the library's metrics; a gpsd restart counts")
        func nodeExporterServesTheHealth() async throws {
            let (gpsdPort, exporterPort) = (freeLoopbackPort(), freeLoopbackPort())
            try #require(gpsdPort != 0 && exporterPort != 0 && gpsdPort != exporterPort)
            try await withScratchDirectory("fleet") { scratch in
                let textfiles = scratch.appendingPathComponent("textfiles")
                try FileManager.default.createDirectory(at: textfiles, withIntermediateDirectories: true)
                let exporter = try await CLIProcess.start([
                    "--web.listen-address=127.0.0.1:\(exporterPort)", "--collector.disable-defaults",
                    "--collector.textfile", "--collector.textfile.directory=\(textfiles.path)",
                ], executable: URL(fileURLWithPath: nodeExporter))
                let server = "127.0.0.1:\(gpsdPort)"
                let health = try await Sample.start("FleetHealth", [
                    "--interval", "0.2", "-o", textfiles.appendingPathComponent("gpsd.prom").path, server,
                ])
                let label = #"{server="\#(server)"}"#
                func value(_ name: String, _ values: [String: Double]) -> Double? { values["gpsd_\(name)\(label)"] }
                /// A metric of the library's (`gpsd_location_NAME`), of status `status` if given.
                func library(_ name: String, status: String? = nil, _ values: [String: Double]) -> Double? {
                    let labels = #"server="\#(server)""# + (status.map { #",status="\#($0)""# } ?? "")
                    return values["gpsd_location_\(name){\(labels)}"]
                }

                // The drive: six epochs without a fix, then a 3D fix with ten satellites in view.
                let first = try await GPSFake.run(logs: [Fixtures.url("drive.nmea")], cycle: 0.01, once: false,
                                                  waitForClient: true, port: gpsdPort) { fake in
                    // The first fix follows epochs of 99.99 HDOP (eph 1899.8 m) and a SKY with none used: wait for the
                    // drive's steady state.
                    let values = await Self.scrape(exporterPort) {
                        value("fix_mode", $0) == 3 && (value("satellites_used", $0) ?? 0) >= 4
                            && (value("horizontal_accuracy_meters", $0) ?? .infinity) < 100
                    }
                    if value("fix_mode", values) != 3 { Issue.record("no 3D fix served: \(values)\n\(await fake.diagnosis())") }
                    return values
                }
                #expect(value("up", first) == 1)
                #expect(value("satellites_visible", first) == 10, "\(first)")
                let used = try #require(value("satellites_used", first))
                #expect(used >= 4 && used <= 10)
                let accuracy = try #require(value("horizontal_accuracy_meters", first))
                #expect(accuracy > 0 && accuracy < 100, "the drive's eph: \(accuracy)")
                let age = try #require(value("fix_age_seconds", first))
                #expect(age >= 0 && age < 60)
                // The library's metrics, through the swift-prometheus backend FleetHealth bootstrapped. FleetHealth
                // started before gpsd: its first attempts were refused, and count.
                let reconnects = try #require(library("reconnects_total", first))
                #expect((library("fixes_total", first) ?? 0) >= 1, "\(first)")
                #expect(library("status", status: "fix", first) == 1 && library("status", status: "stale", first) == 0)
                #expect((library("status_seconds_total", status: "reconnecting", first) ?? 0) > 0, "\(first)")
                #expect(library("last_fix_age_seconds", first) != nil && library("last_fix_timestamp_seconds", first) != nil)

                // gpsd goes away: FleetHealth says so, and counts the reconnection when one comes.
                let down = await Self.scrape(exporterPort) { value("up", $0) == 0 }
                #expect(value("up", down) == 0, "\(down)")
                // What the lost connection's last fix said is not exported as if it were still so; its age is.
                #expect(value("horizontal_accuracy_meters", down) == nil && value("satellites_used", down) == nil, "\(down)")
                #expect(value("fix_age_seconds", down) != nil, "\(down)")
                let again = try await GPSFake.run(logs: [Fixtures.url("drive.nmea")], cycle: 0.01, once: false,
                                                  waitForClient: true, port: gpsdPort) { _ in
                    await Self.scrape(exporterPort) { value("fix_mode", $0) == 3 && value("up", $0) == 1 }
                }
                #expect(value("fix_mode", again) == 3 && value("up", again) == 1, "\(again)")
                #expect((library("reconnects_total", again) ?? 0) > reconnects, "the restart counted: \(again)")

                health.terminate()
                exporter.terminate()
                let result = await health.finish(deadline: .seconds(30))
                #expect(!result.killedAfterDeadline, "\(result)")
                _ = await exporter.finish(deadline: .seconds(30))
            }
        }
    }
}

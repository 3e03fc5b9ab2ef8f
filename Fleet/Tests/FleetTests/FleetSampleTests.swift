import FleetTestSupport
import Foundation
import Testing

/// Samples/Fleet/end-to-end.sh as a user runs it, with the programs this package built: every fix of the bundled
/// drive is stored, and the README's two queries answer from them.
@Suite(.enabled(if: Mosquitto.isAvailable && PostgreSQL.isAvailable), .timeLimit(.minutes(5)))
struct FleetSampleTests {
    @Test func endToEnd() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let script = Process()
        script.executableURL = URL(fileURLWithPath: "/bin/bash")
        script.arguments = [root.appendingPathComponent("Samples/Fleet/end-to-end.sh").path]
        var environment = ProcessInfo.processInfo.environment
        environment["FLEET_BIN"] = FleetProducts.url("fleet-uplink").deletingLastPathComponent().path
        script.environment = environment
        let output = Pipe()
        script.standardOutput = output
        try script.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        script.waitUntilExit()
        #expect(script.terminationStatus == 0, "\(text)")
        #expect(text.contains("fleet-uplink sent 174 fixes of vehicle demo-1"), "\(text)")
        #expect(text.contains("fleet-ingest stored 174 of them"), "\(text)")
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let track = lines.drop { !$0.hasPrefix("One vehicle's track") }.dropFirst().prefix { !$0.isEmpty }
        #expect(track.map { $0.split(separator: " ").first } == ["1", "2", "3", "4", "5"], "\(text)")
        #expect(lines.last(where: { !$0.isEmpty })?.hasPrefix("demo-1 174 2025-06-01 12:02:59+00 ") == true, "\(text)")
    }
}

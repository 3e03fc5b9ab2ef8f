import FleetCore
import FleetTestSupport
import FleetUplink
import Foundation
import GPSDLocation
import Testing
#if canImport(Glibc)
import Glibc
#endif

// What the fault tests (and others) share: fixes, mosquitto_pub and mosquitto_sub, reading the programs' logs.
extension FleetFaultTests {

    /// A fix of epoch `epoch` (1 Hz from the recordings' start), with every value a receiver gives.
    static func fix(epoch: Int) -> Location {
        Location(coordinate: .init(latitude: 52.5 + Double(epoch) * 1e-5, longitude: 13.4 + Double(epoch) * 1e-5),
                 altitude: 35, horizontalAccuracy: 2.5, verticalAccuracy: 4.5, speed: 1.5, course: 45, climb: 0,
                 timestamp: FleetRecording.time(ofEpoch: epoch, start: FleetRecording.defaultStart),
                 fix: .threeDimensional, status: .gps)
    }

    /// Publishes one message at QoS 1 with `mosquitto_pub`.
    static func publish(port: UInt16, topic: String, payload: String, retain: Bool = false) throws {
        try publish(port: port, topic: topic, bytes: Array(payload.utf8), retain: retain)
    }

    static func publish(port: UInt16, topic: String, bytes: [UInt8], retain: Bool = false) throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("payload-\(UUID().uuidString)")
        try Data(bytes).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let tool = Process()
        tool.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_pub")
        tool.arguments = ["-h", "127.0.0.1", "-p", String(port), "-q", "1", "-t", topic]
            + (bytes.isEmpty ? ["-n"] : ["-f", file.path]) + (retain ? ["-r"] : [])
        try tool.run()
        tool.waitUntilExit()
        guard tool.terminationStatus == 0 else { throw ServerError("mosquitto_pub to \(topic) failed") }
    }

    /// The message retained on `topic` (waiting up to 10 s for the broker to publish a will).
    static func retained(port: UInt16, topic: String) throws -> String {
        let tool = Process()
        tool.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_sub")
        tool.arguments = ["-h", "127.0.0.1", "-p", String(port), "-q", "1", "-t", topic, "-C", "1", "-W", "10"]
        let output = Pipe()
        tool.standardOutput = output
        try tool.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        tool.waitUntilExit()
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The number just before `suffix` in the last line that has it ("… 12 duplicates, …").
    static func number(before suffix: String, in text: String) -> Int? {
        guard let line = text.split(separator: "\n").last(where: { $0.contains(suffix) }),
              let range = line.range(of: suffix) else { return nil }
        return Int(line[..<range.lowerBound].split(separator: " ").last ?? "")
    }

    /// The delays the uplink said it waits before each retry ("retrying in 1.3 s").
    static func retryDelays(in text: String) -> [Double] {
        text.split(separator: "\n").compactMap { line in
            guard let range = line.range(of: "retrying in ") else { return nil }
            return Double(line[range.upperBound...].prefix { $0 != " " })
        }
    }
}

import FleetCore
import FleetIngest
import FleetTestSupport
import FleetUplink
import Foundation
import GPSDLocation
import Logging
import CoreMetrics
import MetricsTestKit
#if canImport(Glibc)
import Glibc
#endif

// The benchmark's helpers: options, fixes, timing, the other publishers.
extension FleetBench {

    static func option(_ name: String) -> Int? {
        guard let index = CommandLine.arguments.firstIndex(of: name), index + 1 < CommandLine.arguments.count else {
            return nil
        }
        return Int(CommandLine.arguments[index + 1])
    }

    static func fix(epoch: Int) -> Location {
        Location(coordinate: .init(latitude: 52.5 + Double(epoch) * 1e-5, longitude: 13.4 + Double(epoch) * 1e-5),
                 altitude: 35, horizontalAccuracy: 2.5, verticalAccuracy: 4.5, speed: 1.5, course: 45, climb: 0,
                 timestamp: FleetRecording.time(ofEpoch: epoch, start: FleetRecording.defaultStart),
                 fix: .threeDimensional, status: .gps)
    }

    static func measure(_ body: () throws -> Void) rethrows -> Double {
        let start = ContinuousClock.now
        try body()
        return seconds(start.duration(to: .now))
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    static func row(_ label: String, _ value: Double, _ unit: String) {
        let padded = label.padding(toLength: 52, withPad: " ", startingAt: 0)
        print("  \(padded) \(String(format: "%10.1f", value)) \(unit)")
    }

    static func percentile(_ values: [Double], _ quantile: Double) -> Double {
        guard !values.isEmpty else { return .nan }
        let sorted = values.sorted()
        return sorted[min(Int((Double(sorted.count) * quantile).rounded(.up)) - 1, sorted.count - 1)]
    }

    static func residentKilobytes(_ pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return nil }
        return Int(line.split(separator: " ").dropFirst().first ?? "")
    }

    /// Runs a program to its end, stdin from `input`: the seconds from its start to its end.
    static func runSeconds(_ executable: String, _ arguments: [String], input: String) throws -> Double {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardInput = FileHandle(forReadingAtPath: input)
        let start = ContinuousClock.now
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw ServerError("\(executable) exited \(process.terminationStatus)") }
        return seconds(start.duration(to: .now))
    }

    /// Debian's python3 with python3-paho-mqtt publishing every line: the seconds it measured from its first publish
    /// to its last acknowledgement, or nil without paho.
    static func pahoSeconds(script: String, port: UInt16, lines: String, window: Int) throws -> Double? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [script, String(port), lines, String(window), "fleet/bench-1/fix"]
        var environment = ProcessInfo.processInfo.environment
        environment["PYTHONHOME"] = nil
        environment["PYTHONPATH"] = nil
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        return Double(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// One thread drives the client (paho's loop() between publishes): paho 1.6 started with loop_start() and
    /// publishing from another thread can leave a message queued behind a full window for ever (a publish that sees
    /// the window full races the network thread emptying it), and did here.
    static let pahoScript = """
    import sys, time
    try:
        import paho.mqtt.client as mqtt
    except ImportError:
        sys.exit(3)
    port, path, window, topic = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
    with open(path, "rb") as f:
        lines = [line for line in f.read().split(b"\\n") if line]
    state = {"connected": False, "acknowledged": 0}
    def on_connect(client, userdata, flags, rc):
        state["connected"] = rc == 0
    def on_publish(client, userdata, mid):
        state["acknowledged"] += 1
    client = mqtt.Client(client_id="anchor-paho", clean_session=True, protocol=mqtt.MQTTv311)
    client.max_inflight_messages_set(window)
    client.max_queued_messages_set(0)
    client.on_connect = on_connect
    client.on_publish = on_publish
    client.connect("127.0.0.1", port)
    while not state["connected"]:
        client.loop(0.1)
    start = time.monotonic()
    for index, line in enumerate(lines):
        client.publish(topic, line, qos=1)
        if index % 16 == 0:
            client.loop(0)
    while state["acknowledged"] < len(lines):
        client.loop(0.1)
    print(f"{time.monotonic() - start:.3f}")
    client.disconnect()
    """

    /// An NMEA log of `epochs` epochs, one RMC each, 0.05 s apart, moving north-east.
    static func nmea(epochs: Int) -> String {
        var text = ""
        for index in 0..<epochs {
            let hundredths = index * 5
            let time = String(format: "12%02d%02d.%02d", (hundredths / 6000) % 60, (hundredths / 100) % 60, hundredths % 100)
            let minutes = 30.0 + Double(index) * 0.0001
            let body = String(format: "GPRMC,%@,A,52%09.6f,N,013%09.6f,E,2.9,45.0,010625,,,A", time, minutes, minutes)
            var checksum: UInt8 = 0
            for byte in body.utf8 { checksum ^= byte }
            text += "$\(body)*\(String(format: "%02X", checksum))\r\n"
        }
        return text
    }
}

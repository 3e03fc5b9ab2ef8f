import Foundation
import GPSDLocation
import GPSDTestSupport
import Testing
@testable import WhereAmICore

/// What gpsd or a recording names (a device path, an error) is text for whereami's output, never a command to a
/// terminal or a document's reader: every format, read back by a real parser, with device names made to harm.
@Suite("whereami: hostile names in every format")
struct HostileOutputTests {
    /// Device names a peer on gpsd's port or a recording can send: terminal escapes (ESC, the C1 CSI), NUL, DEL,
    /// a bidirectional override, a line separator, and what XML 1.0 cannot hold at all.
    static let names = [
        "/dev/\u{1}x\u{1B}[31m", "/dev/\u{9B}31mred", "/dev/\u{0}nul\u{7F}", "/dev/a\u{202E}gpj.exe",
        "/dev/line\u{2028}break\r\nnext", "/dev/\u{FFFE}\u{FFFF}\t\u{85}",
    ]

    static func fix(device: String) -> Location {
        Location(coordinate: .init(latitude: 52.5, longitude: 13.4), altitude: 40, horizontalAccuracy: 5,
                 timestamp: Date(timeIntervalSince1970: 1_748_779_205), status: .dgps, device: device)
    }

    /// Whether `text` has a character a terminal obeys, other than the line feeds between records.
    static func hasControl(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0 != "\n" && !$0.isPrintable }
    }

    @Test("JSON and GeoJSON escape the name: JSONSerialization reads back the very name, the text shows none of it raw",
          arguments: names)
    func json(name: String) throws {
        var lines = OutputFormat.json.makeWriter(streaming: true)
        let line = lines.record(Self.fix(device: name))
        #expect(!Self.hasControl(line), "\(line.debugDescription)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["device"] as? String == name)
        #expect(try JSONDecoder().decode(Location.self, from: Data(line.utf8)).device == name)

        var geo = OutputFormat.geojson.makeWriter(streaming: true)
        let document = geo.header + geo.record(Self.fix(device: name)) + geo.footer
        #expect(!Self.hasControl(document), "\(document.debugDescription)")
        let collection = try #require(try JSONSerialization.jsonObject(with: Data(document.utf8)) as? [String: Any])
        let features = try #require(collection["features"] as? [[String: Any]])
        #expect((features.first?["properties"] as? [String: Any])?["device"] as? String == name)
    }

    @Test("CSV: Python's csv module reads one row per fix, the name with its control characters replaced",
          arguments: names)
    func csv(name: String) async throws {
        var writer = OutputFormat.csv.makeWriter(streaming: true)
        let text = writer.header + writer.record(Self.fix(device: name)) + writer.footer
        #expect(!Self.hasControl(text), "\(text.debugDescription)")
        let rows = try await Formats.csvRows(text)
        try #require(rows.count == 2, "\(rows)")
        #expect(Dictionary(uniqueKeysWithValues: zip(rows[0], rows[1]))["device"] == Field.printable(name))
    }

    @Test("GPX: XMLParser and Python's expat read the document, the name in its src", arguments: names)
    func gpx(name: String) async throws {
        var writer = OutputFormat.gpx.makeWriter(streaming: true)
        let text = writer.header + writer.record(Self.fix(device: name)) + writer.footer
        #expect(!Self.hasControl(text), "\(text.debugDescription)")
        #expect(try Formats.gpxRecords(text).count == 1)
        let source = try await Self.expatSources(text)
        let shown = String(String.UnicodeScalarView(name.unicodeScalars.map {
            $0.isPrintable && $0 != "\u{FFFE}" && $0 != "\u{FFFF}" ? $0 : "\u{FFFD}"
        }))
        #expect(source == [shown], "\(source)")
    }

    @Test("text: the block and the line show the name, never its control characters", arguments: names)
    func text(name: String) {
        for streaming in [false, true] {
            var writer = OutputFormat.text.makeWriter(streaming: streaming)
            let text = writer.record(Self.fix(device: name))
            #expect(!Self.hasControl(text), "\(text.debugDescription)")
        }
        var block = OutputFormat.text.makeWriter(streaming: false)
        #expect(block.record(Self.fix(device: name)).contains(Field.printable(name)))
    }

    /// The text of each `src` element, as Python's expat (a strict XML 1.0 parser) reads `text`.
    static func expatSources(_ text: String) async throws -> [String] {
        let script = """
            import json, sys, xml.etree.ElementTree as tree
            root = tree.parse(sys.argv[1]).getroot()
            json.dump([e.text for e in root.iter("{http://www.topografix.com/GPX/1/1}src")], sys.stdout)
            """
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("whereami-\(UUID()).gpx")
        try Data(text.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try await CLIProcess.start(["-c", script, file.path], executable: URL(fileURLWithPath: "/usr/bin/python3"))
            .finish(deadline: .seconds(20))
        try #require(result.status == 0 && !result.endedBySignal, "expat rejected the document: \(result)")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String])
    }
}

extension WhereAmIProcessTests {
    /// whereami replaying a recording a hostile writer made: the time that trapped, device names made to harm.
    @Suite("whereami replaying a hostile recording", .timeLimit(.minutes(2)))
    struct HostileReplayTests {
        /// A recording of gpsd JSON lines: the TPV whose time's 20-digit fraction trapped (SIGILL), fixes from
        /// receivers named with terminal escapes (raw, and as JSON escapes), and a receiver going away.
        static let recording: [String] = [
            #"{"class":"TPV","device":"/dev/x","mode":3,"time":"2025-06-01T12:00:05.12345678901234567890Z","lat":1.0,"lon":2.0}"#,
            #"{"class":"DEVICE","path":"/dev/\u001b]0;owned\u0007\u001b[2J","activated":"2025-06-01T12:00:05.000Z"}"#,
            #"{"class":"TPV","device":"/dev/\u0001x\u001b[31m","mode":3,"time":"2025-06-01T12:00:06.000Z","lat":52.5,"lon":13.4,"altMSL":40.0}"#,
            "{\"class\":\"TPV\",\"device\":\"/dev/raw\u{1B}[41m\u{7}\",\"mode\":3,\"time\":\"2025-06-01T12:00:07.000Z\",\"lat\":52.6,\"lon\":13.5}",
            #"{"class":"TPV","device":"/dev/ttyUSB0","mode":3,"time":"2025-06-01T12:00:08.000Z","lat":52.7,"lon":13.6}"#,
            #"{"class":"DEVICE","path":"/dev/\u001b]0;owned\u0007\u001b[2J","activated":0}"#,
        ]

        private func replay(_ format: String, quiet: Bool = true, lines: [String] = recording) async throws -> CLIResult {
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("hostile-\(UUID()).json")
            try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            return try await whereami(["--replay", file.path, "--follow", "--speed", "0", "--format", format]
                                      + (quiet ? ["-q"] : []))
        }

        @Test("every format: exit 0, no signal, the three fixes, read back by a real parser, no control character")
        func everyFormat() async throws {
            for format in OutputFormat.allCases {
                let result = try await replay(format.rawValue)
                #expect(result.status == 0 && !result.endedBySignal, "\(format): \(result)")
                #expect(!HostileOutputTests.hasControl(result.stdout), "\(format): \(result.stdout.debugDescription)")
                let count = switch format {
                case .json: try result.stdoutLines.map { try Formats.jsonRecord($0) }.count
                case .geojson: try Formats.geoJSONRecords(result.stdout).count
                case .csv: try await Formats.csvRecords(result.stdout).count
                case .gpx: try Formats.gpxRecords(result.stdout).count
                case .text: try result.stdoutLines.map { try Formats.textLineRecord($0) }.count
                }
                // The first TPV's time is refused (a fix without a time is held back); the other three are fixes.
                #expect(count == 3, "\(format): \(result.stdout)")
            }
        }

        @Test("a replay slower than a thousandth is refused as bad usage (it trapped: SIGILL)",
              arguments: ["1e-30", "5e-324", "0.0009"])
        func slowestSpeed(speed: String) async throws {
            let result = try await whereami("--demo", "--speed", speed)
            #expect(result.status == 64 && !result.endedBySignal, "\(result)")
            #expect(result.stderr.contains("--speed must be 0 (as fast as possible) or a factor of at least 0.001"),
                    "\(result.stderr)")
        }

        @Test("standard error (status, the library's log, gpsd's error) shows what was sent, never obeys it")
        func standardError() async throws {
            // A time that is not one, with raw escapes in it, is logged (once per kind) as sent: the first.
            let time = "{\"class\":\"TPV\",\"device\":\"/dev/y\",\"mode\":3,\"time\":\"\u{1B}[2J\u{1B}[31m\",\"lat\":1.0,\"lon\":2.0}"
            let error = #"{"class":"ERROR","message":"\u001b[2J\u001b]0;owned\u0007"}"#
            let result = try await replay("json", quiet: false, lines: [time] + Self.recording + [error])
            #expect(result.status == 76 && !result.endedBySignal, "gpsd's error: \(result)")
            #expect(!HostileOutputTests.hasControl(result.stderr), "\(result.stderr.debugDescription)")
            #expect(result.stderr.contains("whereami: gpsd: \u{FFFD}[2J\u{FFFD}]0;owned\u{FFFD}\n"), "\(result.stderr)")
            #expect(result.stderr.contains(#"a time that is not a calendar time (\u{1B}[2J\u{1B}[31m)"#), "\(result.stderr)")
        }
    }
}

import Foundation
import GPSDLocation
import GPSDTestSupport
import Testing

/// The samples' tests: each sample as a process of its own, against a real gpsd fed by gpsfake (or against a
/// recording), its output read back with a real parser (JSONDecoder, XMLParser, Prometheus's text format).
@Suite("Samples", .enabled(if: GPSFake.isAvailable), .timeLimit(.minutes(2)))
struct SampleTests {}

enum Sample {
    static let start = Date(timeIntervalSince1970: 1_748_779_200)   // 2025-06-01T12:00:00Z

    static func time(_ second: Int) -> String { GPSDTime.string(from: start.addingTimeInterval(Double(second))) }

    /// One receiver moving east at 52.5°N, one epoch a second for each second in `fixes`, and a no-fix epoch for
    /// each second in `noFix`, as an NMEA log in `directory`.
    static func log(_ name: String, fixes: [Int], noFix: [Int] = [], in directory: URL) throws -> URL {
        let seconds = (fixes + noFix).sorted()
        let text = seconds.map { second in
            let time = start.addingTimeInterval(Double(second))
            return noFix.contains(second) ? NMEA.noFixEpoch(time: time)
                : NMEA.epoch(time: time, latitude: 52.5, longitude: longitude(second))
        }.joined()
        let url = directory.appendingPathComponent("\(name).nmea")
        try Data(text.utf8).write(to: url)
        return url
    }

    /// The longitude of the epoch at `second` in ``log(_:fixes:noFix:in:)``'s logs (as NMEA writes it: the test
    /// compares within 1e-6°).
    static func longitude(_ second: Int) -> Double { 13.4 + Double(second) * 0.0001 }

    /// The whereami recording, in the source tree.
    static let recording = Fixtures.directory.deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/whereami/Resources/drive.gpsd.json")

    /// Starts the sample `name` with `arguments`.
    static func start(_ name: String, _ arguments: [String]) async throws -> CLIProcess {
        try await CLIProcess.start(arguments, executable: BuiltProduct.url(name))
    }

    /// Waits (polling a file, not the clock's say) until `condition` holds for the files in `directory`, at most
    /// `timeout`.
    static func waitForFiles(in directory: URL, timeout: Duration = .seconds(30),
                             _ condition: ([String]) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition(lines(in: directory)) { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return condition(lines(in: directory))
    }

    /// Every line of every file in `directory`, files in name order.
    static func lines(in directory: URL) -> [String] {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
        return names.flatMap { name -> [String] in
            guard let text = try? String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8) else { return [] }
            return text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        }
    }
}

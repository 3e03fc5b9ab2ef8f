import Foundation
import GPSDLocation
import GPSDTestSupport
import Testing

/// The samples' tests: each sample as a process of its own, against a real gpsd fed by gpsfake (or against a
/// recording), its output read back with a real parser (JSONDecoder, XMLParser, Prometheus's text format).
@Suite("Samples", .enabled(if: GPSFake.isAvailable), .serialized, .liveSuite, .timeLimit(.minutes(2)))
struct SampleTests {}

enum Sample {
    static func time(_ second: Int) -> String { GPSDTime.string(from: NMEA.Track.time(second))! }

    /// The tests' track (``NMEA/Track``): an epoch for each second in `fixes`, and a no-fix epoch for each second
    /// in `noFix`, as an NMEA log in `directory`.
    static func log(_ name: String, fixes: [Int], noFix: [Int] = [], in directory: URL) throws -> URL {
        let cycles = (fixes + noFix).sorted().map { NMEA.Track.epoch($0, noFix: noFix.contains($0)) }
        return try writeLog(cycles, named: "\(name).nmea", in: directory)
    }

    /// The longitude of the epoch at `second` in ``log(_:fixes:noFix:in:)``'s logs.
    static func longitude(_ second: Int) -> Double { NMEA.Track.longitude(second) }

    /// The whereami recording, in the source tree.
    static let recording = Fixtures.directory.deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/WhereAmICore/Resources/drive.gpsd.json")

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

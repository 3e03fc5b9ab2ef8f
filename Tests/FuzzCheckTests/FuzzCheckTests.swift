import FuzzChecks
import Foundation
import Glibc
import Testing

/// Every input kept for a fuzz target (the seed corpus `Fuzz/Corpus/TARGET`, and every input that ever failed,
/// `Fuzz/FailCases/TARGET`) through that target's check, in a child process: a trap or a broken rule fails the
/// test of its target, not the run.
@Suite("Fuzz corpus and fail cases", .timeLimit(.minutes(2)))
struct FuzzCheckTests {
    static let fuzzDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz")

    /// The files kept for `check` in `folder` (`Corpus` or `FailCases`), sorted.
    static func inputs(_ folder: String, _ check: FuzzCheck) -> [URL] {
        let directory = fuzzDirectory.appendingPathComponent(folder).appendingPathComponent(check.rawValue)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { !$0.hasPrefix(".") }.sorted().map { directory.appendingPathComponent($0) }
    }

    /// Runs `check` on every input kept for it (in the child process of an exit test). A child that loops (libgps
    /// on a line it should not have been handed) is ended by SIGALRM after 100 s, and its test fails with that
    /// signal: the suite's time limit does not end a child it waits for.
    static func runKeptInputs(_ check: FuzzCheck) throws {
        alarm(100)
        for url in inputs("Corpus", check) + inputs("FailCases", check) {
            check.run(Array(try Data(contentsOf: url)))
        }
    }

    @Test("each target has a seed corpus", arguments: FuzzCheck.allCases)
    func seeds(check: FuzzCheck) {
        #expect(Self.inputs("Corpus", check).count >= 10, "a seed corpus for \(check.rawValue)")
    }

    // One exit test a target, each naming its target: an exit test's body captures nothing on Swift 6.2.

    @Test func decoder() async {
        await #expect(processExitsWith: .success) { try FuzzCheckTests.runKeptInputs(.decoder) }
    }

    @Test func json() async {
        await #expect(processExitsWith: .success) { try FuzzCheckTests.runKeptInputs(.json) }
    }

    @Test func server() async {
        await #expect(processExitsWith: .success) { try FuzzCheckTests.runKeptInputs(.server) }
    }

    @Test func arguments() async {
        await #expect(processExitsWith: .success) { try FuzzCheckTests.runKeptInputs(.arguments) }
    }
}

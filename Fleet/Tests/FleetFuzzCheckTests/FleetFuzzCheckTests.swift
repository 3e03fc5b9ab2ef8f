import FleetFuzzChecks
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Every input kept for a fleet fuzz target (the seed corpus `Fuzz/Corpus/TARGET`, and every input that ever
/// failed, `Fuzz/FailCases/TARGET`) through that target's check, in a child process: a trap or a broken rule fails
/// the test of its target, not the run.
@Suite("Fleet fuzz corpus and fail cases", .timeLimit(.minutes(2)))
struct FleetFuzzCheckTests {
    static let fuzzDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz")

    /// The files kept for `check` in `folder` (`Corpus` or `FailCases`), sorted.
    static func inputs(_ folder: String, _ check: FleetFuzzCheck) -> [URL] {
        let directory = fuzzDirectory.appendingPathComponent(folder).appendingPathComponent(check.rawValue)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { !$0.hasPrefix(".") }.sorted().map { directory.appendingPathComponent($0) }
    }

    /// Runs `check` on every input kept for it (in the child process of an exit test), ended by SIGALRM after
    /// 100 s if it loops: the suite's time limit does not end a child it waits for.
    static func runKeptInputs(_ check: FleetFuzzCheck) throws {
        alarm(100)
        for url in inputs("Corpus", check) + inputs("FailCases", check) {
            check.run(Array(try Data(contentsOf: url)))
        }
    }

    @Test("each target has a seed corpus", arguments: FleetFuzzCheck.allCases)
    func seeds(check: FleetFuzzCheck) {
        #expect(Self.inputs("Corpus", check).count >= 10, "a seed corpus for \(check.rawValue)")
    }

    // One exit test a target, each naming its target: an exit test's body captures nothing.

    @Test func mqtt() async {
        await #expect(processExitsWith: .success) { try FleetFuzzCheckTests.runKeptInputs(.mqtt) }
    }

    @Test func message() async {
        await #expect(processExitsWith: .success) { try FleetFuzzCheckTests.runKeptInputs(.message) }
    }

    @Test func broker() async {
        await #expect(processExitsWith: .success) { try FleetFuzzCheckTests.runKeptInputs(.broker) }
    }
}

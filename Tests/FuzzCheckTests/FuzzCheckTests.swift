import FuzzChecks
import Foundation
import Testing

/// Every input kept for a fuzz target (the seed corpus `Fuzz/Corpus/TARGET`, and every input that ever failed,
/// `Fuzz/FailCases/TARGET`) through that target's check, in a child process: a trap or a broken rule fails the
/// test of its target, not the run.
@Suite("Fuzz corpus and fail cases")
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

    @Test("every seed and every fail case passes its target's check", arguments: FuzzCheck.allCases)
    func keptInputs(check: FuzzCheck) async throws {
        let seeds = Self.inputs("Corpus", check)
        #expect(seeds.count >= 10, "a seed corpus for \(check.rawValue)")
        let paths = (seeds + Self.inputs("FailCases", check)).map(\.path)
        let name = check.rawValue
        await #expect(processExitsWith: .success, "\(name): \(paths.count) inputs") { [name = name as String, paths = paths as [String]] in
            let check = try #require(FuzzCheck(rawValue: name))
            for path in paths {
                check.run(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
            }
        }
    }
}

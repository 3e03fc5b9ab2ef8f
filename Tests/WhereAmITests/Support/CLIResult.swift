import Foundation

/// The `whereami` binary that `swift build --build-tests` put next to this test bundle.
///
/// Found from the test process's own executable (`/proc/self/exe`), so any `--scratch-path` works.
enum WhereAmIBinary {
    static let url: URL = {
        let executable = URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = executable.deletingLastPathComponent()
        while directory.path != "/" {
            let candidate = directory.appendingPathComponent("whereami")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return executable.deletingLastPathComponent().appendingPathComponent("whereami")
    }()
}

/// How a run of a program ended and what it wrote.
struct CLIResult: Sendable, CustomStringConvertible {
    var status: Int32
    /// True when it ended by an uncaught signal (`status` is then the signal number).
    var endedBySignal: Bool
    /// True when the test had to kill it because it ran past its deadline.
    var killedAfterDeadline: Bool
    var stdout: String
    var stderr: String
    /// From just before launch to the moment it had ended.
    var elapsed: Duration
    /// When it had ended (its output closed and it was reaped).
    var ended: ContinuousClock.Instant

    var stdoutLines: [String] { stdout.split(separator: "\n", omittingEmptySubsequences: true).map(String.init) }

    var description: String {
        "status \(endedBySignal ? "signal " : "")\(status)\(killedAfterDeadline ? " (killed after deadline)" : "")"
            + " after \(elapsed)\n--- stdout:\n\(stdout.prefix(4000))\n--- stderr:\n\(stderr.prefix(4000))"
    }
}

import Foundation

/// How a run of a program ended and what it wrote.
package struct CLIResult: Sendable, CustomStringConvertible {
    package var status: Int32
    /// True when it ended by an uncaught signal (`status` is then the signal number).
    package var endedBySignal: Bool
    /// True when the test had to kill it because it ran past its deadline.
    package var killedAfterDeadline: Bool
    package var stdout: String
    package var stderr: String
    /// From just before launch to the moment it had ended.
    package var elapsed: Duration
    /// When it had ended (its output closed and it was reaped).
    package var ended: ContinuousClock.Instant

    package var stdoutLines: [String] { stdout.split(separator: "\n", omittingEmptySubsequences: true).map(String.init) }

    package var description: String {
        "status \(endedBySignal ? "signal " : "")\(status)\(killedAfterDeadline ? " (killed after deadline)" : "")"
            + " after \(elapsed)\n--- stdout:\n\(stdout.prefix(4000))\n--- stderr:\n\(stderr.prefix(4000))"
    }
}

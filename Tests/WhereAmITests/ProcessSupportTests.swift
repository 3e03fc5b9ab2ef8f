import Foundation
import GPSDTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension WhereAmIProcessTests {
    /// The tests' process runner: a test that stops early (a failed `#require`, a throw) leaves nothing running.
    @Suite("the tests' process runner", .timeLimit(.minutes(1)))
    struct ProcessSupportTests {
        @Test("a process its test lets go of unfinished is killed, with its group")
        func aProcessLetGoOfIsKilled() async throws {
            let pids = try await Self.startAndLetGo()
            try #require(pids.count == 2)
            try await Self.waitUntilGone(pids)
        }

        /// Starts a shell in a group of its own, with a child, and returns both pids without finishing it.
        private static func startAndLetGo() async throws -> [pid_t] {
            let process = try await CLIProcess.start(["-c", "sleep 600 & echo $!; wait"], executable: URL(fileURLWithPath: "/bin/sh"))
            let echoed = await process.waitForOutput(timeout: .seconds(30)) { $0.hasSuffix("\n") }
            let child = pid_t(process.stdoutSoFar.trimmingCharacters(in: .whitespacesAndNewlines))
            #expect(echoed && child != nil, "the child's pid: \(process.stdoutSoFar)")
            let pids = [process.processIdentifier] + (child.map { [$0] } ?? [])
            #expect(pids.allSatisfy(CLIProcess.isRunning), "both run")
            return pids
        }

        /// Polls until none of `pids` is alive; a bound only a process left running reaches.
        private static func waitUntilGone(_ pids: [pid_t]) async throws {
            let deadline = ContinuousClock.now + .seconds(30)
            while pids.contains(where: CLIProcess.isRunning), ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(!pids.contains(where: CLIProcess.isRunning), "still running: \(pids.filter(CLIProcess.isRunning))")
        }
    }
}

import Foundation
import GPSDTestSupport

/// Runs `whereami` with `arguments` to its end (killing it after `deadline`).
func whereami(_ arguments: String..., deadline: Duration = .seconds(30)) async throws -> CLIResult {
    try await whereami(arguments, deadline: deadline)
}

func whereami(_ arguments: [String], deadline: Duration = .seconds(30)) async throws -> CLIResult {
    try await CLIProcess.start(arguments).finish(deadline: deadline)
}

/// Launches `whereami` with `arguments` and returns it running, for tests that watch or signal it.
func startWhereAmI(_ arguments: [String]) async throws -> CLIProcess {
    try await CLIProcess.start(arguments)
}

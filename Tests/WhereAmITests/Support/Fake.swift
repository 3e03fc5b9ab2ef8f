import Foundation
import GPSDTestSupport
import Testing

/// Runs `body` with gpsfake playing the fixture `log` (see
/// ``GPSFake/start(logs:cycle:once:lingerAfterEnd:waitForClient:)``; a `once` log ends gpsd a second after its last
/// sentence), and stops gpsfake afterwards, however `body` ends. 
///
/// The log is held back until the first client watches (`waitForClient`) unless told otherwise: on a busy
/// machine, gpsfake started without that sometimes never gets its device into gpsd (gpsd answers `?DEVICES`
/// with none, for as long as the test waits), and the client then sees no fix at all. With the gate, gpsfake
/// adds its device only once gpsd has long been serving clients.
func withGPSFake<T>(
    _ log: String, cycle: Double = 0.05, once: Bool = false, waitForClient: Bool = true,
    _ body: (GPSFake) async throws -> T
) async throws -> T {
    try await GPSFake.run(logs: [Fixtures.url(log)], cycle: cycle, once: once, lingerAfterEnd: 1,
                          waitForClient: waitForClient, body)
}

extension GPSFake {
    /// For a failure message, gathered off the cooperative pool: whether gpsfake still runs, the end of its
    /// stderr, and what a fresh client (`gpspipe -w`) gets from this gpsd within 3 s, so that a failure shows
    /// whether gpsd delivered fixes at all.
    func diagnosis() async -> String {
        let server = server
        let sample = try? await CLIProcess.start(["-w", "-n", "8", server], executable: URL(fileURLWithPath: "/usr/bin/gpspipe"))
            .finish(deadline: .seconds(3))
        return "--- gpsfake running: \(isRunning); its stderr:\n\(standardError.suffix(1500))\n"
            + "--- gpspipe -w \(server): \(sample.map { "\($0.stdout.prefix(3000))" } ?? "not run")"
    }
}

/// Like `#require` for a run against gpsfake: unless `condition` holds, records an issue with `comment`, what
/// `process` (if given; it is ended) wrote, and gpsd's side of it, and returns false so the test can stop.
func requireLive(
    _ condition: Bool, _ comment: @autoclosure () -> String, fake: GPSFake, process: CLIProcess? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) async -> Bool {
    guard !condition else { return true }
    var details = comment()
    if let process {
        details += "\n\(await process.finish(deadline: .seconds(1)))"
    }
    details += "\n" + (await fake.diagnosis())
    Issue.record("\(details)", sourceLocation: sourceLocation)
    return false
}

/// The package's root directory (where `Package.swift` is).
var packageDirectory: URL {
    Fixtures.directory.deletingLastPathComponent().deletingLastPathComponent()
}

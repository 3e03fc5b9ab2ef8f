import Foundation
import GPSDTestSupport
import Testing

/// Runs `body` with gpsfake playing the fixture `log` (see
/// ``GPSFake/start(logs:cycle:once:lingerAfterEnd:waitForClient:)``; a `once` log ends gpsd `lingerAfterEnd` seconds
/// after its last sentence), and stops gpsfake afterwards, however `body` ends.
///
/// The log is held back until the first client watches (`waitForClient`) unless told otherwise: on a busy
/// machine, gpsfake started without that sometimes never gets its device into gpsd (gpsd answers `?DEVICES`
/// with none, for as long as the test waits), and the client then sees no fix at all. With the gate, gpsfake
/// adds its device only once gpsd has long been serving clients.
func withGPSFake<T>(
    _ log: String, cycle: Double = 0.05, once: Bool = false, lingerAfterEnd: Int = 1, waitForClient: Bool = true,
    _ body: (GPSFake) async throws -> T
) async throws -> T {
    try await GPSFake.run(logs: [Fixtures.url(log)], cycle: cycle, once: once, lingerAfterEnd: lingerAfterEnd,
                          waitForClient: waitForClient, body)
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

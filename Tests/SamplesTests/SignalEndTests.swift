import Foundation
import GPSDTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension SampleTests {
    /// Each sample, its standard output and error into a pipe already full that nobody reads, ends on SIGTERM by
    /// itself with status 0 (Samples/README.md), not by the last resort (its end request ending it by the
    /// signal 0.8 s after it): the process itself has shown it ended within that bound. RobotPose (its messages)
    /// and GeofenceWatcher (a region's first state) have begun a write into the full pipe when the signal comes;
    /// TrackRecorder's last line meets the pipe after it; TelemetryLogger and FleetHealth write files only.
    @Suite("Each sample ends on SIGTERM into a full pipe")
    struct SignalEndTests {
        static let recording = Sample.recording.path

        static let runs: [(name: String, arguments: [String], writes: Bool)] = [
            ("TelemetryLogger", ["--replay", recording, "--directory", "telemetry"], false),
            ("TrackRecorder", ["--replay", recording, "-o", "track.gpx"], false),
            ("GeofenceWatcher", ["--replay", recording, "--region", "square:52.5219,13.4132,80"], true),
            ("RobotPose", ["--replay", recording], true),
            ("FleetHealth", ["--replay", recording, "--interval", "0.1", "-o", "health.prom"], false),
        ]

        @Test("SIGTERM into a full pipe: status 0", arguments: runs.map(\.name))
        func sample(name: String) async throws {
            let (_, arguments, writes) = try #require(Self.runs.first { $0.name == name })
            try await withScratchDirectory("signal-\(name)") { directory in
                let output = try StalledOutput(.pipe(full: true))
                let paths = arguments.map { ["telemetry", "track.gpx", "health.prom"].contains($0)
                    ? directory.appendingPathComponent($0).path : $0 }
                let run = try output.start(BuiltProduct.url(name), paths, errorsToo: true)
                // Until its handler is installed, SIGTERM would end it by the default action.
                let deadline = ContinuousClock.now + .seconds(60)
                while !run.catches(SIGTERM), ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(20))   // between two looks at /proc, not a wait for it
                }
                try #require(run.catches(SIGTERM), "\(name) never caught SIGTERM")
                if writes {
                    while !run.hasOpenedItsOutputAgain, ContinuousClock.now < deadline {
                        try await Task.sleep(for: .milliseconds(20))   // between two looks at /proc
                    }
                    try #require(run.hasOpenedItsOutputAgain, "\(name) never began to write")
                } else {
                    // A second of the recording: the files it writes grow meanwhile.
                    try await Task.sleep(for: .seconds(1))
                }
                let end = await run.end(by: SIGTERM)
                #expect(end.status == 0 && !end.bySignal && end.after != nil, "\(name): \(end)")
                if name == "TrackRecorder" {
                    let gpx = try String(contentsOf: directory.appendingPathComponent("track.gpx"), encoding: .utf8)
                    #expect(gpx.hasSuffix("</gpx>\n"), "the track is closed: \(gpx.suffix(200))")
                }
            }
        }
    }
}

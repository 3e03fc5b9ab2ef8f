import Foundation
import GPSDTestSupport
import Testing

/// Durations from a sample's command line: values no clock can hold (they trapped converting to Int64: SIGILL),
/// and waits too short to be meant, are refused as bad usage, before anything starts.
@Suite("Samples: option bounds", .timeLimit(.minutes(1)))
struct OptionBoundsTests {
    @Test(arguments: [
        ("RobotPose", ["--rate", "1e-300"], "--rate must be from 0.001 to 1000"),
        ("RobotPose", ["--rate", "1e-10"], "--rate must be from 0.001 to 1000"),
        ("RobotPose", ["--stale-after", "1e20"], "--stale-after must be a positive number of seconds, at most a century"),
        ("FleetHealth", ["-o", "x.prom", "--interval", "1e16"], "--interval must be from 0.001 seconds to a century"),
        // A wait that rounds to nothing rewrote the file in a busy loop.
        ("FleetHealth", ["-o", "x.prom", "--interval", "1e-300"], "--interval must be from 0.001 seconds to a century"),
        ("TelemetryLogger", ["--directory", "/tmp/none", "--rotate-after", "1e16"],
         "--rotate-after must be from 0.001 seconds to a century"),
        ("TelemetryLogger", ["--directory", "/tmp/none", "--rotate-after", "1e-300"],
         "--rotate-after must be from 0.001 seconds to a century"),
    ] as [(String, [String], String)])
    func refused(sample: String, options: [String], message: String) async throws {
        let result = try await Sample.start(sample, ["--replay", Sample.recording.path, "--speed", "0"] + options)
            .finish(deadline: .seconds(30))
        #expect(result.status == 64 && !result.endedBySignal, "\(result)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
    }
}

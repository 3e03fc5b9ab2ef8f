public import Foundation

/// The fleet's programs as this package built them, next to the test bundle (`.build/debug/fleet-uplink`, …).
public enum FleetProducts {
    /// The built executable `name`, found in the directories above the running test bundle.
    public static func url(_ name: String) -> URL {
        let executable = URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = executable.deletingLastPathComponent()
        while directory.path != "/" {
            let candidate = directory.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return executable.deletingLastPathComponent().appendingPathComponent(name)
    }

    /// Starts `fleet-uplink` with `arguments`, its output in `output`.
    public static func uplink(_ arguments: [String], output: String) throws -> ServerProcess {
        try ServerProcess(url("fleet-uplink").path, arguments, output: output)
    }

    /// Starts `fleet-ingest` with `arguments`, its output in `output`.
    public static func ingest(_ arguments: [String], output: String) throws -> ServerProcess {
        try ServerProcess(url("fleet-ingest").path, arguments, output: output)
    }
}

public import Foundation

/// The fleet's programs as this package built them, next to the test bundle (`.build/debug/fleet-uplink`, …).
public enum FleetProducts {
    /// The built executable `name` (``BuiltProduct``).
    public static func url(_ name: String) -> URL { BuiltProduct.url(name) }

    /// Starts `fleet-uplink` with `arguments`, its output in `output`.
    public static func uplink(_ arguments: [String], output: String) throws -> ServerProcess {
        try ServerProcess(url("fleet-uplink").path, arguments, output: output)
    }

    /// Starts `fleet-ingest` with `arguments`, its output in `output`.
    public static func ingest(_ arguments: [String], output: String) throws -> ServerProcess {
        try ServerProcess(url("fleet-ingest").path, arguments, output: output)
    }
}

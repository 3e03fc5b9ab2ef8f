public import Foundation

/// gpsfake replaying NMEA logs through a real gpsd on a free loopback port, for the fleet's benchmark: a
/// ``ServerProcess`` (a process group of its own, ended by SIGKILL to the whole group, gpsd with it) with a
/// `TMPDIR` of its own.
public struct GPSFakeProcess: Sendable {
    /// The port gpsd listens on, on 127.0.0.1.
    public let port: UInt16
    private let process: ServerProcess
    private let directory: URL

    /// Starts gpsfake on `logs`, one sentence every `cycle` seconds, each log once (`-1`); returns once gpsd
    /// accepts connections. gpsfake starts replaying at once: a caller that needs the first epochs gives
    /// a log longer than it reads.
    public static func start(logs: [URL], cycle: Double = 0.05) async throws -> GPSFakeProcess {
        let directory = try makeServerDirectory("gpsfake")
        let port = freeLoopbackPort()
        let process = try ServerProcess("/usr/bin/gpsfake",
                                        ["-q", "-n", "-1", "-P", String(port), "-c", String(cycle)] + logs.map(\.path),
                                        environment: ["TMPDIR": directory.path],
                                        output: directory.appendingPathComponent("gpsfake.log").path)
        do {
            try await waitUntilListening(port: port, process: process, timeout: .seconds(30))
        } catch {
            await process.stop()
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
        return GPSFakeProcess(port: port, process: process, directory: directory)
    }

    /// Ends gpsfake and its gpsd (SIGKILL to the group) and removes its directory.
    public func stop() async {
        await process.stop()
        try? FileManager.default.removeItem(at: directory)
    }
}

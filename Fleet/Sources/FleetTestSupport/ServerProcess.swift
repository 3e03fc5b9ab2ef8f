public import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A server the tests start themselves (Mosquitto, one of the fleet's programs): a process in a process group of its
/// own (Foundation's `Process` makes each child the leader of one), its output in a file, ended by a signal to the
/// whole group.
public final class ServerProcess: @unchecked Sendable {
    /// The command line, for messages.
    public let commandLine: String
    /// Where its stdout and stderr go.
    public let outputPath: String
    private let process: Process
    private let lock = NSLock()
    private var isStopped = false

    /// Starts `executable` with `arguments`, as `user` when given (through `setpriv`, which stays the same process).
    public init(_ executable: String, _ arguments: [String], user: String? = nil, environment: [String: String] = [:],
                output: String) throws {
        var command = [executable] + arguments
        if let user {
            command = ["/usr/bin/setpriv", "--reuid=\(user)", "--regid=\(user)", "--init-groups", "--"] + command
        }
        commandLine = command.joined(separator: " ")
        outputPath = output
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        log.seekToEndOfFile()
        process = Process()
        // Not through setsid(1): the child already leads its own group, so setsid would fork and leave this object
        // watching a parent that has exited, the server out of its reach.
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        var merged = ProcessInfo.processInfo.environment
        merged["PYTHONHOME"] = nil
        merged["PYTHONPATH"] = nil
        for (key, value) in environment { merged[key] = value }
        process.environment = merged
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = log
        process.standardError = log
        try process.run()
        try? log.close()
    }

    /// Its process id, which is also its process group's.
    public var processID: Int32 { process.processIdentifier }

    /// Whether it is still running.
    public var isRunning: Bool { process.isRunning }

    /// What it wrote so far.
    public var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }

    /// The last `count` bytes it wrote, as text: cheap on a large output.
    public func outputTail(_ count: Int = 4096) -> String {
        guard let file = FileHandle(forReadingAtPath: outputPath) else { return "" }
        defer { try? file.close() }
        let size = (try? file.seekToEnd()) ?? 0
        try? file.seek(toOffset: size > UInt64(count) ? size - UInt64(count) : 0)
        return String(decoding: (try? file.readToEnd()) ?? Data(), as: UTF8.self)
    }

    /// Sends `signal` to its whole process group.
    public func signal(_ signal: Int32) {
        kill(-process.processIdentifier, signal)
    }

    /// Waits until it has exited (at most `timeout`); its exit status, or nil if it is still running.
    @discardableResult
    public func waitForExit(timeout: Duration = .seconds(30)) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            if ContinuousClock.now >= deadline { return nil }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return process.terminationStatus
    }

    /// Ends it: `signal` to the group (SIGTERM: a clean shutdown), then SIGKILL to the group after `grace`.
    public func stop(_ signal: Int32 = SIGKILL, grace: Duration = .seconds(10)) async {
        lock.withLock { isStopped = true }
        self.signal(signal)
        if await waitForExit(timeout: grace) == nil {
            self.signal(SIGKILL)
            await waitForExit()
        }
        // What the group left (a postmaster's children) goes with it.
        kill(-process.processIdentifier, SIGKILL)
    }

    deinit {
        if process.isRunning { kill(-process.processIdentifier, SIGKILL) }
    }
}

/// Waits until 127.0.0.1:`port` accepts a TCP connection, or `process` has ended, or `timeout` has passed.
public func waitUntilListening(port: UInt16, process: ServerProcess, timeout: Duration = .seconds(60)) async throws {
    let deadline = ContinuousClock.now + timeout
    while true {
        if canConnect(port: port) { return }
        guard process.isRunning else {
            throw ServerError("\(process.commandLine) ended before it listened on 127.0.0.1:\(port):\n\(process.output)")
        }
        guard ContinuousClock.now < deadline else {
            throw ServerError("\(process.commandLine) did not listen on 127.0.0.1:\(port) within \(timeout):\n\(process.output)")
        }
        try await Task.sleep(for: .milliseconds(20))
    }
}

/// Runs `program` with `arguments` to its end, its output discarded; throws unless it exits with 0.
public func runQuietly(_ program: String, _ arguments: [String]) throws {
    let tool = Process()
    tool.executableURL = URL(fileURLWithPath: program)
    tool.arguments = arguments
    tool.standardOutput = FileHandle.nullDevice
    tool.standardError = FileHandle.nullDevice
    try tool.run()
    tool.waitUntilExit()
    guard tool.terminationStatus == 0 else {
        throw ServerError("\(program) \(arguments.joined(separator: " ")) failed (\(tool.terminationStatus))")
    }
}

/// A server that could not be started or used.
public struct ServerError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// A directory of its own under the system's temporary directory, readable by every user (PostgreSQL runs as
/// `postgres`), removed by the caller.
public func makeServerDirectory(_ label: String) throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("fleet-\(label)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true,
                                            attributes: [.posixPermissions: 0o755])
    return url
}

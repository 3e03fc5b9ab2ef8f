public import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A real PostgreSQL 15 server (Debian's `postgresql-15`, with PostGIS 3.3 installed beside it) on a free loopback
/// port, its cluster in a directory of its own, so that a restart on the same port finds every committed row.
///
/// `initdb` and `postgres` refuse to run as root: run by root, they run as the user `postgres` that Debian's package
/// creates (through `setpriv`); run by anyone else, as that user. Authentication is `trust` on 127.0.0.1, the
/// superuser is `postgres`, and `fsync` stays on: a commit is on disk when it returns, as in production.
///
/// ```swift
/// let server = try await PostgreSQL.start()
/// defer { Task { await server.stop() } }
/// try await server.createDatabase("fleet")
/// print(try await server.psql("SELECT 1", database: "fleet"))   // 1
/// // connect to server.url(database: "fleet")
/// ```
public final class PostgreSQL: @unchecked Sendable {
    /// The port it listens on, on 127.0.0.1.
    public let port: UInt16
    /// Its directory: the cluster in `data`, its Unix socket, its log.
    public let directory: URL
    private let lock = NSLock()
    private var process: Process?

    /// Where Debian installs PostgreSQL 15's programs.
    public static let binaries = "/usr/lib/postgresql/15/bin"

    /// Whether PostgreSQL 15 is installed.
    public static var isAvailable: Bool { access("\(binaries)/postgres", X_OK) == 0 }

    /// The cluster's data directory.
    public var dataDirectory: URL { directory.appendingPathComponent("data") }

    /// The user the server runs as: `postgres` when started by root, else nil (whoever started it).
    private static var serverUser: String? { geteuid() == 0 ? "postgres" : nil }

    private init(port: UInt16, directory: URL) {
        self.port = port
        self.directory = directory
    }

    deinit {
        // A server its tests forgot: its processes end when the postmaster does.
        if let process, process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
    }

    /// `postgresql://postgres@127.0.0.1:PORT/DATABASE`.
    public func url(database: String = "postgres") -> String {
        "postgresql://postgres@127.0.0.1:\(port)/\(database)"
    }

    /// Makes a cluster (`initdb -A trust -U postgres`) in a new directory and starts a server on a free port;
    /// returns once it accepts connections.
    public static func start() async throws -> PostgreSQL {
        let directory = try makeServerDirectory("postgres")
        do {
            try await initialize(directory)
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
        var lastError: (any Error)?
        for _ in 0..<3 {
            let server = PostgreSQL(port: freeLoopbackPort(), directory: directory)
            do {
                try await server.restart()
                try await server.waitUntilReady()
                return server
            } catch {
                lastError = error
                await server.kill()
            }
        }
        try? FileManager.default.removeItem(at: directory)
        throw lastError ?? ServerError("postgres did not start")
    }

    private static func initialize(_ directory: URL) async throws {
        let data = directory.appendingPathComponent("data").path
        if let user = serverUser {
            // The server's own directory (its socket, its lock files) and the cluster belong to it.
            guard let entry = getpwnam(user) else { throw ServerError("no user \(user) to run postgres as") }
            guard chown(directory.path, entry.pointee.pw_uid, entry.pointee.pw_gid) == 0 else {
                throw ServerError("chown \(directory.path) to \(user): \(String(cString: strerror(errno)))")
            }
        }
        let (status, _, errors) = try await run(
            serverCommand("\(binaries)/initdb", ["-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8",
                                                 "--locale=C", "--no-sync"]))
        guard status == 0 else { throw ServerError("initdb failed (\(status)):\n\(errors)") }
    }

    /// The command that runs `executable` as the server's user, in a System V IPC namespace of its own: PostgreSQL
    /// needs a shared memory segment, and the machine's (SHMMNI, 4096) may all be taken by segments other programs
    /// left behind. Not root, it gets that namespace in a user namespace that maps the user to itself, where the
    /// kernel allows one; else it runs as it is.
    private static func serverCommand(_ executable: String, _ arguments: [String]) -> [String] {
        guard let user = serverUser else {
            return userNamespacesWork ? ["/usr/bin/unshare", "--map-current-user", "--ipc", "--", executable] + arguments
                                      : [executable] + arguments
        }
        return ["/usr/bin/unshare", "--ipc", "--", "/usr/bin/setpriv", "--reuid=\(user)", "--regid=\(user)",
                "--init-groups", "--", executable] + arguments
    }

    /// Whether `unshare --map-current-user --ipc` works here (the kernel or a container may forbid it).
    private static let userNamespacesWork: Bool = {
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        probe.arguments = ["--map-current-user", "--ipc", "--", "/bin/true"]
        probe.standardInput = FileHandle.nullDevice
        probe.standardOutput = FileHandle.nullDevice
        probe.standardError = FileHandle.nullDevice
        guard (try? probe.run()) != nil else { return false }
        probe.waitUntilExit()
        return probe.terminationStatus == 0
    }()

    /// Starts it (again) on the same port with the same cluster; returns once it accepts TCP connections. After a
    /// SIGKILL it recovers from its write-ahead log first: every committed transaction is there.
    public func restart() async throws {
        let command = Self.serverCommand(
            "\(Self.binaries)/postgres",
            ["-D", dataDirectory.path, "-p", String(port), "-c", "listen_addresses=127.0.0.1",
             "-k", directory.path, "-c", "unix_socket_permissions=0777"])
        // Started here, not through ServerProcess: the server's children are waited for by ``kill(_:)``, and its
        // command line depends on the user (serverCommand).
        let log = directory.appendingPathComponent("postgres.log")
        if !FileManager.default.fileExists(atPath: log.path) {
            _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        }
        let output = try FileHandle(forWritingTo: log)
        output.seekToEndOfFile()
        let server = Process()
        server.executableURL = URL(fileURLWithPath: command[0])
        server.arguments = Array(command.dropFirst())
        server.standardInput = FileHandle.nullDevice
        server.standardOutput = output
        server.standardError = output
        try server.run()
        try? output.close()
        lock.withLock { process = server }
        let deadline = ContinuousClock.now + .seconds(60)
        while !canConnect(port: port) {
            guard server.isRunning else {
                throw ServerError("\(command.joined(separator: " ")) ended before it listened on 127.0.0.1:\(port):\n\(self.log)")
            }
            guard ContinuousClock.now < deadline else {
                throw ServerError("\(command.joined(separator: " ")) did not listen on 127.0.0.1:\(port):\n\(self.log)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        try await waitUntilReady()
    }

    /// Waits until it answers a query: it listens already while it recovers, and refuses connections then.
    private func waitUntilReady() async throws {
        let deadline = ContinuousClock.now + .seconds(120)
        while true {
            do {
                _ = try await psql("SELECT 1")
                return
            } catch {
                guard ContinuousClock.now < deadline, lock.withLock({ process?.isRunning }) == true else { throw error }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
    }

    /// Kills it and all its processes with `signal` (SIGKILL: no shutdown, as in a power cut; SIGTERM or SIGINT: a
    /// clean one), and returns once every one of them has exited, so that a ``restart()`` never meets the old ones.
    ///
    /// The postmaster's processes are found by their parent, in /proc: each leads a session of its own, so one
    /// signal to a process group does not reach them.
    public func kill(_ signal: Int32 = SIGKILL) async {
        guard let server = lock.withLock({ process }) else { return }
        var targets: [pid_t] = []
        let postmaster = server.isRunning ? server.processIdentifier : postmasterPID()
        if let postmaster { targets = [postmaster] + Self.children(of: postmaster) }
        if signal == SIGKILL {
            for pid in targets { _ = Glibc.kill(pid, SIGKILL) }
        } else if let postmaster = targets.first {
            _ = Glibc.kill(postmaster, signal)
        }
        let deadline = ContinuousClock.now + .seconds(60)
        while targets.contains(where: Self.isAlive), ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        for pid in targets where Self.isAlive(pid) { _ = Glibc.kill(pid, SIGKILL) }
        while targets.contains(where: Self.isAlive) { try? await Task.sleep(for: .milliseconds(10)) }
        lock.withLock { process = nil }
    }

    /// The postmaster's process id, from the first line of `postmaster.pid`.
    private func postmasterPID() -> pid_t? {
        let text = try? String(contentsOf: dataDirectory.appendingPathComponent("postmaster.pid"), encoding: .utf8)
        return text?.split(separator: "\n").first.flatMap { pid_t($0.trimmingCharacters(in: .whitespaces)) }
    }

    /// The processes whose parent is `parent`, from /proc/PID/stat.
    private static func children(of parent: pid_t) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry -> pid_t? in
            guard let pid = pid_t(entry), let stat = statFields(pid), stat.count > 1, pid_t(stat[1]) == parent else {
                return nil
            }
            return pid
        }
    }

    /// The fields of /proc/PID/stat after the command name: state, parent, …
    private static func statFields(_ pid: pid_t) -> [Substring]? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let end = text.lastIndex(of: ")") else { return nil }
        return text[text.index(after: end)...].split(separator: " ")
    }

    /// Whether `pid` is a process that has not exited (a zombie has).
    private static func isAlive(_ pid: pid_t) -> Bool {
        guard let state = statFields(pid)?.first else { return false }
        return state != "Z" && state != "X"
    }

    /// Stops it and removes its directory.
    public func stop() async {
        await kill(SIGKILL)
        try? FileManager.default.removeItem(at: directory)
    }

    /// What it logged.
    public var log: String {
        (try? String(contentsOf: directory.appendingPathComponent("postgres.log"), encoding: .utf8)) ?? ""
    }
}

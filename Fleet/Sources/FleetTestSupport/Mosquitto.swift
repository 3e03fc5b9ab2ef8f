public import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A real Mosquitto broker (Debian's `mosquitto`) on a free loopback port, with a configuration of its own and its
/// persistence in a directory of its own, so that a restart on the same port keeps retained messages, persistent
/// sessions and their queued messages.
///
/// ```swift
/// let broker = try await Mosquitto.start()
/// defer { Task { await broker.stop() } }
/// // connect to 127.0.0.1:broker.port
/// ```
public final class Mosquitto: @unchecked Sendable {
    /// The port it listens on, on 127.0.0.1.
    public let port: UInt16
    /// Its configuration, persistence and log.
    public let directory: URL
    /// The users it accepts (`user: password`), or empty for anonymous access.
    public let users: [String: String]
    /// The port of its TLS listener on 127.0.0.1, when started with `tls`.
    public let tlsPort: UInt16?
    private let lock = NSLock()
    private var process: ServerProcess?

    /// `mqtt://127.0.0.1:PORT`, with `user:password@` when asked.
    public func url(user: String? = nil, password: String? = nil) -> String {
        var credentials = ""
        if let user { credentials = user + (password.map { ":\($0)" } ?? "") + "@" }
        return "mqtt://\(credentials)127.0.0.1:\(port)"
    }

    private init(port: UInt16, directory: URL, users: [String: String], tlsPort: UInt16?) {
        self.port = port
        self.directory = directory
        self.users = users
        self.tlsPort = tlsPort
    }

    /// Whether `mosquitto` is installed.
    public static var isAvailable: Bool { access("/usr/sbin/mosquitto", X_OK) == 0 }

    /// Starts a broker on a free port.
    ///
    /// - Parameters:
    ///   - users: Users and passwords it accepts (then no anonymous client); empty: anyone.
    ///   - maxInflight: QoS 1 messages it sends a client before that client's PUBACKs (`max_inflight_messages`).
    ///   - saveOnEveryChange: Writes its persistence file after every change (`autosave_on_changes`, interval 1), so
    ///     that a SIGKILL loses nothing it had acknowledged; slow, for the tests that kill it.
    ///   - extraConfiguration: More lines for `mosquitto.conf`.
    ///   - tls: A second listener, on ``tlsPort``, speaking TLS with this CA, certificate and key (PEM files, e.g.
    ///     from ``makeCertificates(in:ipAddress:)``); the same users.
    ///   - acl: The text of an ACL file (`acl_file`, e.g. `Samples/Fleet/acl`): which user may read and write which
    ///     topics. Nil: every client may read and write everything.
    public static func start(users: [String: String] = [:], maxInflight: Int = 1000, saveOnEveryChange: Bool = false,
                             extraConfiguration: [String] = [],
                             tls: (caFile: String, certFile: String, keyFile: String)? = nil,
                             acl: String? = nil) async throws -> Mosquitto {
        let directory = try makeServerDirectory("mosquitto")
        var lastError: (any Error)?
        for _ in 0..<3 {
            let broker = Mosquitto(port: freeLoopbackPort(), directory: directory, users: users,
                                   tlsPort: tls == nil ? nil : freeLoopbackPort())
            do {
                try broker.writeConfiguration(maxInflight: maxInflight, saveOnEveryChange: saveOnEveryChange,
                                              extra: extraConfiguration, tls: tls, acl: acl)
                try await broker.restart()
                return broker
            } catch {
                lastError = error
                await broker.stop()
            }
        }
        throw lastError ?? ServerError("mosquitto did not start")
    }

    private func writeConfiguration(maxInflight: Int, saveOnEveryChange: Bool, extra: [String],
                                    tls: (caFile: String, certFile: String, keyFile: String)?, acl: String?) throws {
        var lines = [
            "listener \(port) 127.0.0.1",
            // Run as whoever started it (as root, mosquitto would otherwise become the user `mosquitto`).
            "user \(String(cString: getpwuid(geteuid()).pointee.pw_name))",
            "persistence true",
            "persistence_location \(directory.path)/",
            "max_inflight_messages \(maxInflight)",
            // A persistent session's queue is unbounded: the ingest may be away for a day of fixes.
            "max_queued_messages 0",
            "log_dest stderr",
            "log_type error",
            "log_type warning",
        ]
        if saveOnEveryChange { lines += ["autosave_on_changes true", "autosave_interval 1"] }
        if users.isEmpty {
            lines.append("allow_anonymous true")
        } else {
            let passwords = directory.appendingPathComponent("passwords").path
            _ = FileManager.default.createFile(atPath: passwords, contents: nil)
            for (user, password) in users.sorted(by: { $0.key < $1.key }) {
                let tool = Process()
                tool.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_passwd")
                tool.arguments = ["-b", passwords, user, password]
                try tool.run()
                tool.waitUntilExit()
                guard tool.terminationStatus == 0 else { throw ServerError("mosquitto_passwd failed for \(user)") }
            }
            lines += ["allow_anonymous false", "password_file \(passwords)"]
        }
        if let acl {
            let file = directory.appendingPathComponent("acl")
            try acl.write(to: file, atomically: true, encoding: .utf8)
            lines.append("acl_file \(file.path)")
        }
        lines += extra
        if let tls, let tlsPort {
            // Last: cafile, certfile and keyfile belong to the listener before them.
            lines += ["listener \(tlsPort) 127.0.0.1", "cafile \(tls.caFile)", "certfile \(tls.certFile)",
                      "keyfile \(tls.keyFile)"]
        }
        try (lines.joined(separator: "\n") + "\n").write(
            to: directory.appendingPathComponent("mosquitto.conf"), atomically: true, encoding: .utf8)
    }

    /// Starts it (again) on the same port, with the same persistence; returns once it accepts connections.
    public func restart() async throws {
        let server = try ServerProcess("/usr/sbin/mosquitto", ["-c", directory.appendingPathComponent("mosquitto.conf").path],
                                       output: directory.appendingPathComponent("mosquitto.log").path)
        lock.withLock { process = server }
        try await waitUntilListening(port: port, process: server)
        if let tlsPort { try await waitUntilListening(port: tlsPort, process: server) }
    }

    /// Makes a CA and a server certificate it signed for `ipAddress` (its CN and its only subjectAltName), with
    /// `openssl`, in `directory`: PEM files for
    /// ``start(users:maxInflight:saveOnEveryChange:extraConfiguration:tls:acl:)`` and for a client's CA file. Each
    /// call makes a new CA, so two calls give two CAs that do not trust each other.
    public static func makeCertificates(in directory: URL, ipAddress: String = "127.0.0.1") throws
        -> (caFile: String, certFile: String, keyFile: String) {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = { (name: String) in directory.appendingPathComponent(name).path }
        try "subjectAltName=IP:\(ipAddress)\n".write(toFile: path("san.ext"), atomically: true, encoding: .utf8)
        let key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try runOpenSSL(["req", "-x509"] + key + ["-keyout", path("ca.key"), "-out", path("ca.crt"), "-days", "2",
                                                "-subj", "/CN=Fleet test CA \(UUID().uuidString)"])
        try runOpenSSL(["req"] + key + ["-keyout", path("server.key"), "-out", path("server.csr"),
                                        "-subj", "/CN=\(ipAddress)"])
        try runOpenSSL(["x509", "-req", "-in", path("server.csr"), "-CA", path("ca.crt"), "-CAkey", path("ca.key"),
                        "-CAcreateserial", "-out", path("server.crt"), "-days", "2", "-extfile", path("san.ext")])
        return (path("ca.crt"), path("server.crt"), path("server.key"))
    }

    private static func runOpenSSL(_ arguments: [String]) throws {
        try runQuietly("/usr/bin/openssl", arguments)
    }

    /// Kills it with `signal` (SIGKILL: no chance to save; SIGTERM: it saves its persistence and exits).
    public func kill(_ signal: Int32 = SIGKILL) async {
        guard let server = lock.withLock({ process }) else { return }
        await server.stop(signal)
        lock.withLock { process = nil }
    }

    /// Stops it and removes its directory.
    public func stop() async {
        await kill(SIGKILL)
        try? FileManager.default.removeItem(at: directory)
    }

    /// What it logged.
    public var log: String { lock.withLock { process?.output } ?? "" }
}

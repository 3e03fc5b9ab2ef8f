import Foundation

// What the tests do with a running server through PostgreSQL's own client programs: databases, roles, SQL.
extension PostgreSQL {
    /// Makes `role` (a login) with `password`, and makes the server ask it for that password (SCRAM) on 127.0.0.1,
    /// where everyone else is trusted.
    public func createRole(_ role: String, password: String) async throws {
        _ = try await psql("CREATE ROLE \"\(role)\" LOGIN PASSWORD '\(password)'")
        let hba = dataDirectory.appendingPathComponent("pg_hba.conf")
        let rules = try String(contentsOf: hba, encoding: .utf8)
        try ("host all \(role) 127.0.0.1/32 scram-sha-256\n" + rules).write(to: hba, atomically: false, encoding: .utf8)
        _ = try await psql("SELECT pg_reload_conf()")
    }

    /// Makes a database (`CREATE DATABASE`, the name quoted as an identifier).
    public func createDatabase(_ name: String) async throws {
        _ = try await runTool("createdb", ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres", name])
    }

    /// Runs `sql` through `psql -XAt` (no psqlrc, unaligned, tuples only) on 127.0.0.1 and returns what it printed:
    /// one line per row, columns separated by `|`. Throws what psql wrote to stderr when it fails (`ON_ERROR_STOP`).
    @discardableResult
    public func psql(_ sql: String, database: String = "postgres") async throws -> String {
        try await runTool("psql", ["-XAt", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", String(port),
                                   "-U", "postgres", "-d", database, "-c", sql])
    }

    /// Runs one of PostgreSQL's client programs as whoever runs the tests; its stdout, or an error with its stderr.
    private func runTool(_ name: String, _ arguments: [String]) async throws -> String {
        let command = ["\(Self.binaries)/\(name)"] + arguments
        let (status, output, errors) = try await Self.run(command)
        guard status == 0 else {
            throw ServerError("\(name) \(arguments.joined(separator: " ")) failed (\(status)): \(errors)")
        }
        return output.hasSuffix("\n") ? String(output.dropLast()) : output
    }

    /// Runs `command` to its end: its exit status, stdout and stderr.
    static func run(_ command: [String]) async throws -> (Int32, String, String) {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("fleet-pgtool-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let outURL = scratch.appendingPathComponent("stdout"), errURL = scratch.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let out = try FileHandle(forWritingTo: outURL), err = try FileHandle(forWritingTo: errURL)
        let tool = Process()
        tool.executableURL = URL(fileURLWithPath: command[0])
        tool.arguments = Array(command.dropFirst())
        var environment = ProcessInfo.processInfo.environment
        for key in environment.keys where key.hasPrefix("PG") { environment[key] = nil }
        environment["PGCONNECT_TIMEOUT"] = "30"
        tool.environment = environment
        tool.standardInput = FileHandle.nullDevice
        tool.standardOutput = out
        tool.standardError = err
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            tool.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do {
                try tool.run()
            } catch {
                tool.terminationHandler = nil
                continuation.resume(throwing: error)
            }
        }
        try? out.close()
        try? err.close()
        let output = (try? String(contentsOf: outURL, encoding: .utf8)) ?? ""
        let errors = (try? String(contentsOf: errURL, encoding: .utf8)) ?? ""
        return (status, output, errors)
    }
}

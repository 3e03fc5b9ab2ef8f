import FleetCore
import FleetTestSupport
import FleetUplink
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A fleet for one test: a real Mosquitto and a real PostgreSQL with PostGIS on free loopback ports, a scratch
/// directory, and the two programs started as processes.
final class FleetHarness: @unchecked Sendable {
    let broker: Mosquitto
    let database: PostgreSQL
    let directory: URL
    private var processes: [ServerProcess] = []
    /// The CA of the broker's TLS listener (``Mosquitto/tlsPort``), when it has one.
    private(set) var caFile: String?
    private var prepared = false
    private let lock = NSLock()

    private init(broker: Mosquitto, database: PostgreSQL, directory: URL) {
        self.broker = broker
        self.database = database
        self.directory = directory
    }

    /// Runs `body` with a new fleet; ends every process and server afterwards, however `body` ends.
    static func with<T>(users: [String: String] = [:], tls: Bool = false, brokerSavesEveryChange: Bool = false,
                        _ body: (FleetHarness) async throws -> T) async throws -> T {
        let certificates = try tls ? Mosquitto.makeCertificates(in: makeServerDirectory("certificates")) : nil
        let broker = try await Mosquitto.start(users: users, saveOnEveryChange: brokerSavesEveryChange, tls: certificates)
        let database: PostgreSQL
        do { database = try await PostgreSQL.start() } catch {
            await broker.stop()
            throw error
        }
        let directory = try makeServerDirectory("fleet")
        let fleet = FleetHarness(broker: broker, database: database, directory: directory)
        fleet.caFile = certificates?.caFile
        do {
            let result = try await body(fleet)
            await fleet.end()
            return result
        } catch {
            fleet.dumpLogs()
            await fleet.end()
            throw error
        }
    }

    private func end() async {
        for process in lock.withLock({ processes }) { await process.stop(SIGKILL, grace: .seconds(1)) }
        await broker.stop()
        await database.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Prints every program's output, for a failing test.
    func dumpLogs() {
        for process in lock.withLock({ processes }) {
            print("== \(process.commandLine)\n\(process.output)")
        }
        print("== mosquitto\n\(broker.log)")
    }

    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// A recording of `count` epochs, its first at `start`.
    func recording(_ name: String, count: Int, start: Date = FleetRecording.defaultStart) throws -> String {
        try FleetRecording.write(count: count, to: directory.appendingPathComponent(name), start: start)
        return path(name)
    }

    /// Runs `fleet-ingest --prepare` as the database's owner (once: later calls do nothing): the table, and the
    /// grants to `roles`.
    func prepareDatabase(grantingTo roles: [String] = []) async throws {
        guard lock.withLock({ !prepared }) else { return }
        let process = try FleetProducts.ingest(["--prepare", "--database", database.url()]
                                                   + roles.flatMap { ["--grant-to", $0] },
                                               output: path("prepare-\(UUID().uuidString.prefix(8)).log"))
        guard await process.waitForExit(timeout: .seconds(120)) == 0 else {
            throw ServerError("fleet-ingest --prepare failed: \(process.output)")
        }
        lock.withLock { prepared = true }
    }

    /// Starts fleet-ingest on this fleet's broker and database (prepared first, by its owner), and waits until it
    /// has subscribed (its session at the broker exists from then on, so nothing published later is lost to it).
    @discardableResult
    func startIngest(_ extra: [String] = [], broker url: String? = nil, database databaseURL: String? = nil)
        async throws -> ServerProcess {
        try await prepareDatabase()
        let process = try FleetProducts.ingest(
            ["--broker", url ?? broker.url(), "--database", databaseURL ?? database.url()] + extra,
            output: path("ingest-\(UUID().uuidString.prefix(8)).log"))
        lock.withLock { processes.append(process) }
        try await waitUntil("fleet-ingest has subscribed") {
            guard process.isRunning else { throw ServerError("fleet-ingest ended: \(process.output)") }
            return process.output.contains("subscribed to")
        }
        return process
    }

    /// Starts fleet-uplink for `vehicle` replaying `recording` (as fast as possible unless `speed` says otherwise),
    /// its queue in `queue` (by default the vehicle's own directory).
    @discardableResult
    func startUplink(vehicle: String, replay recording: String, speed: Double = 0, queue: String? = nil,
                     broker url: String? = nil, _ extra: [String] = []) throws -> ServerProcess {
        let process = try FleetProducts.uplink(
            ["--vehicle", vehicle, "--broker", url ?? broker.url(), "--replay", recording, "--speed", String(speed),
             "--queue", queue ?? queueDirectory(vehicle)] + extra,
            output: path("uplink-\(vehicle)-\(UUID().uuidString.prefix(8)).log"))
        lock.withLock { processes.append(process) }
        return process
    }

    func queueDirectory(_ vehicle: String) -> String { path("queue-\(vehicle)") }

    /// The sequence numbers stored for `vehicle`, ascending.
    func storedSeqs(_ vehicle: String) async throws -> [Int64] {
        let output = try await database.psql("SELECT seq FROM fixes WHERE vehicle = '\(vehicle)' ORDER BY seq")
        return output.split(separator: "\n").compactMap { Int64($0) }
    }

    /// How many rows `vehicle` has (0 before the table exists).
    func storedCount(_ vehicle: String) async throws -> Int {
        let exists = try await database.psql("SELECT to_regclass('public.fixes') IS NOT NULL")
        guard exists.trimmingCharacters(in: .whitespacesAndNewlines) == "t" else { return 0 }
        let output = try await database.psql("SELECT count(*) FROM fixes WHERE vehicle = '\(vehicle)'")
        return Int(output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }

    /// Waits until `vehicle` has at least `count` rows (a hang guard of `timeout`, not a bound on speed).
    func waitForRows(_ vehicle: String, atLeast count: Int, timeout: Duration = .seconds(300)) async throws {
        let deadline = ContinuousClock.now + timeout
        while try await storedCount(vehicle) < count {
            guard ContinuousClock.now < deadline else {
                throw ServerError("\(vehicle): fewer than \(count) rows after \(timeout) (\(try await storedCount(vehicle)))")
            }
            try await Task.sleep(for: .milliseconds(200))
        }
    }

    /// Waits until `condition` holds (a hang guard of `timeout`).
    func waitUntil(_ what: String, timeout: Duration = .seconds(120), _ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while try await !condition() {
            guard ContinuousClock.now < deadline else { throw ServerError("not within \(timeout): \(what)") }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// The queue's statistics, read from its file (the uplink must have stopped).
    func queueStatistics(_ vehicle: String) throws -> FixQueueStatistics {
        try FixQueue(directory: queueDirectory(vehicle), vehicle: try VehicleID(vehicle)).statistics
    }
}

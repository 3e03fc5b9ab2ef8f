public import FleetCore
public import Foundation
public import GPSDLocation
import GRDB
import GPSDSystem

/// The uplink's on-disk queue of fixes: SQLite in WAL mode, each append committed durably before it returns.
///
/// Every fix gets the vehicle's next sequence number (1, 2, 3, …), which is never given twice, also across restarts
/// and after its fix was removed or dropped. The queue holds at most ``capacity`` fixes: an append beyond it drops
/// the oldest and counts them (``FixQueueStatistics/dropped``, kept in the file). A fix leaves the queue by
/// ``remove(_:)`` once the broker has acknowledged it.
///
/// ```swift
/// let queue = try FixQueue(directory: "/var/lib/fleet-uplink", vehicle: try VehicleID("robot-7"))
/// try queue.append(fix)                                       // durable when it returns
/// let fixes = try queue.batch(after: 0, limit: 500)           // oldest first
/// // … publish each fix.payload, and once acknowledged:
/// try queue.remove(fixes.map(\.seq))
/// print(queue.statistics.depth)
/// ```
///
/// The file is `DIRECTORY/queue.sqlite` (with `queue.sqlite-wal`). One queue at a time has it open: it holds
/// SQLite's exclusive lock until it is deallocated or ``close()``d, so a second uplink on the same directory gets
/// ``FixQueueError/inUse(_:)`` rather than sending the same fixes twice. A SIGKILL or a power cut loses no fix an
/// append returned for.
///
/// Each method blocks until SQLite is done, an append until its commit is on disk: call them from a thread of your
/// own, not from Swift's cooperative pool. Calls from several threads are serialized.
public final class FixQueue: Sendable {
    /// The largest number of fixes a queue keeps unless told: 11½ days of 1 Hz fixes, under 1 GB.
    public static let defaultCapacity = 1_000_000

    /// The vehicle whose fixes the queue holds.
    public let vehicle: VehicleID
    /// The queue's identity, drawn at random when its file was made (nil for a file made before queues had one):
    /// every fix's payload carries it, so a queue made again is never taken for a replay of this one.
    public let identity: QueueID?
    /// The largest number of fixes the queue keeps; an append beyond it drops the oldest.
    public let capacity: Int
    /// The queue's file.
    public let path: String

    private let database: DatabaseQueue
    /// Written only inside `database`'s serialized accesses, after their commit; read by `statistics` from any thread.
    private let state: Locked<FixQueueStatistics>

    /// The file's layout; a queue written by a newer layout is refused. 2: the queue's identity.
    static let schemaVersion = 2

    /// Opens (creating when missing) DIRECTORY/queue.sqlite; refuses a queue that belongs to another vehicle.
    ///
    /// The directory is created when missing. A queue that holds more than `capacity` fixes (opened before with a
    /// larger one) drops its oldest at once, and counts them.
    ///
    /// ```swift
    /// let queue = try FixQueue(directory: "/var/lib/fleet-uplink", vehicle: try VehicleID("robot-7"),
    ///                          capacity: 86_400 * 7)
    /// ```
    public init(directory: String, vehicle: VehicleID, capacity: Int = FixQueue.defaultCapacity)
        throws(FixQueueError)
    {
        guard capacity >= 1 else { throw .invalidCapacity }
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw .database("cannot create the directory \(directory): \(error.localizedDescription)")
        }
        let path = URL(fileURLWithPath: directory).appendingPathComponent("queue.sqlite").path
        self.vehicle = vehicle
        self.capacity = capacity
        self.path = path

        var configuration = Configuration()
        configuration.label = "FixQueue"
        configuration.busyMode = .immediateError
        configuration.prepareDatabase { db in
            // Before the first access, so that the lock is held from the first write on and SQLite keeps the WAL's
            // index in memory rather than in a shared -shm file.
            try db.execute(sql: "PRAGMA locking_mode = EXCLUSIVE")
            let mode = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
            guard mode == "wal" else { throw FixQueueError.database("SQLite refused WAL mode (\(mode ?? "none"))") }
            // In WAL mode FULL syncs the WAL at each commit: a commit that returned survives a power cut.
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        let database: DatabaseQueue
        do {
            database = try DatabaseQueue(path: path, configuration: configuration)
        } catch {
            throw Self.queueError(error, path: path)
        }
        self.database = database

        let loaded: (FixQueueStatistics, QueueID?)
        do {
            loaded = try database.inDatabase { db throws -> (FixQueueStatistics, QueueID?) in
                var statistics = FixQueueStatistics()
                var identity: QueueID?
                try db.inTransaction(.immediate) {
                    identity = try Self.load(db, path: path, vehicle: vehicle, into: &statistics)
                    try Self.trim(db, capacity: capacity, statistics: &statistics)
                    return .commit
                }
                return (statistics, identity)
            }
        } catch {
            try? database.close()
            throw Self.queueError(error, path: path)
        }
        state = Locked(loaded.0)
        identity = loaded.1
    }

    /// Appends one fix with the vehicle's next sequence number, and returns its message. It is on disk when this
    /// returns. `now` is when it was queued (``FixQueueStatistics/oldestQueuedAt``).
    ///
    /// ```swift
    /// let message = try queue.append(fix)
    /// print(message.seq)
    /// ```
    @discardableResult
    public func append(_ location: Location, at now: Date = Date()) throws(FixQueueError) -> FleetMessage {
        try append(contentsOf: [location], at: now)[0]
    }

    /// Appends many fixes in one transaction (a backlog for tests and benchmarks), in order, and returns their
    /// messages. When one of them cannot be sent none is appended. Beyond ``capacity`` the oldest are dropped, also
    /// some of these when there are more of them than the capacity.
    ///
    /// ```swift
    /// let messages = try queue.append(contentsOf: day)
    /// ```
    @discardableResult
    public func append(contentsOf locations: [Location], at now: Date = Date()) throws(FixQueueError)
        -> [FleetMessage]
    {
        if locations.isEmpty { return [] }
        let queued = now.timeIntervalSince1970
        let vehicle = self.vehicle, capacity = self.capacity, identity = self.identity
        return try access { db throws -> [FleetMessage] in
            var statistics = self.state.withLock { $0 }
            var messages: [FleetMessage] = []
            var payloads: [Data] = []
            messages.reserveCapacity(locations.count)
            payloads.reserveCapacity(locations.count)
            for (offset, location) in locations.enumerated() {
                let message = FleetMessage(vehicle: vehicle, queue: identity, seq: statistics.lastSeq + 1 + Int64(offset),
                                           location: location)
                do throws(FleetError) {
                    payloads.append(Data(try message.payload()))
                } catch {
                    throw FixQueueError.unsendable(error)
                }
                messages.append(message)
            }
            try db.inTransaction(.immediate) {
                let insert = try db.cachedStatement(sql: "INSERT INTO fixes (seq, payload, queued) VALUES (?, ?, ?)")
                for (message, payload) in zip(messages, payloads) {
                    try insert.execute(arguments: [message.seq, payload, queued])
                }
                if statistics.depth == 0 { statistics.oldestQueuedAt = Date(timeIntervalSince1970: queued) }
                statistics.depth += messages.count
                statistics.lastSeq = messages[messages.count - 1].seq
                try db.cachedStatement(sql: "UPDATE queue SET last_seq = ?").execute(arguments: [statistics.lastSeq])
                try Self.trim(db, capacity: capacity, statistics: &statistics)
                return .commit
            }
            self.state.withLock { $0 = statistics }
            return messages
        }
    }

    /// Up to `limit` fixes with seq > `seq`, ascending: the backlog from `seq` on, oldest first.
    ///
    /// ```swift
    /// var after: Int64 = 0
    /// while case let fixes = try queue.batch(after: after, limit: 500), let last = fixes.last {
    ///     publish(fixes)
    ///     after = last.seq
    /// }
    /// ```
    public func batch(after seq: Int64, limit: Int) throws(FixQueueError) -> [QueuedFix] {
        guard limit > 0 else { return [] }
        return try access { db throws -> [QueuedFix] in
            let select = try db.cachedStatement(sql: "SELECT seq, payload FROM fixes WHERE seq > ? ORDER BY seq LIMIT ?")
            return try Self.fixes(select, arguments: [seq, limit], capacity: limit)
        }
    }

    /// The newest fix in the queue (what goes first, retained, as the vehicle's state), or nil when it is empty.
    ///
    /// ```swift
    /// if let newest = try queue.newest() { publishState(newest.payload) }
    /// ```
    public func newest() throws(FixQueueError) -> QueuedFix? {
        try access { db throws -> QueuedFix? in
            let select = try db.cachedStatement(sql: "SELECT seq, payload FROM fixes ORDER BY seq DESC LIMIT 1")
            return try Self.fixes(select, arguments: [], capacity: 1).first
        }
    }

    /// Removes these (acknowledged) fixes in one transaction; ones already gone are ignored.
    ///
    /// ```swift
    /// try queue.remove([41, 42, 43])
    /// ```
    public func remove(_ seqs: [Int64]) throws(FixQueueError) {
        if seqs.isEmpty { return }
        try access { db throws in
            var statistics = self.state.withLock { $0 }
            var removed = 0
            try db.inTransaction(.immediate) {
                let delete = try db.cachedStatement(sql: "DELETE FROM fixes WHERE seq = ?")
                for seq in seqs {
                    try delete.execute(arguments: [seq])
                    removed += db.changesCount
                }
                return .commit
            }
            guard removed > 0 else { return }
            statistics.depth -= removed
            statistics.oldestQueuedAt = try Self.oldestQueuedAt(db)
            self.state.withLock { $0 = statistics }
        }
    }

    /// The queue's depth, drops, newest sequence number and oldest fix's time, from memory (kept up to date under a
    /// lock): no query.
    public var statistics: FixQueueStatistics { state.withLock { $0 } }

    /// Closes the file and releases its lock now rather than when the queue is deallocated. Every call after this
    /// one throws.
    public func close() throws(FixQueueError) {
        do {
            try database.close()
        } catch {
            throw Self.queueError(error, path: path)
        }
    }

    /// The value of `PRAGMA name` on the queue's own connection (`journal_mode`, `synchronous`, …), for tests.
    package func pragma(_ name: String) throws(FixQueueError) -> String? {
        guard name.allSatisfy({ $0.isLetter || $0 == "_" }) else { throw .database("not a pragma: \(name)") }
        return try access { db in try String.fetchOne(db, sql: "PRAGMA \(name)") }
    }

    // MARK: - SQL

    /// `body` in the connection's serialized queue; any error as a ``FixQueueError``.
    private func access<T>(_ body: (Database) throws -> T) throws(FixQueueError) -> T {
        do {
            return try database.inDatabase(body)
        } catch {
            throw Self.queueError(error, path: path)
        }
    }
}

import FleetCore
import Foundation
import GRDB

// The queue's SQL: its layout, its loading and its trimming, and how SQLite's errors are told.
extension FixQueue {
    static func queueError(_ error: any Error, path: String) -> FixQueueError {
        switch error {
        case let error as FixQueueError:
            return error
        case let error as DatabaseError where error.resultCode.primaryResultCode == .SQLITE_BUSY:
            return .inUse(path)
        case let error as DatabaseError:
            return .database("\(path): \(error.message ?? "SQLite error \(error.resultCode.rawValue)")")
        default:
            return .database("\(path): \(error)")
        }
    }

    /// Creates the tables when missing (with a new identity), brings an older layout up to date, checks the vehicle,
    /// and reads the statistics; returns the queue's identity.
    static func load(_ db: Database, path: String, vehicle: VehicleID, into statistics: inout FixQueueStatistics)
        throws -> QueueID?
    {
        let version = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
        guard version <= schemaVersion else {
            throw FixQueueError.database("\(path) is a queue of a newer layout (\(version))")
        }
        if version == 0 {
            try db.execute(sql: """
                CREATE TABLE fixes (seq INTEGER PRIMARY KEY, payload BLOB NOT NULL, queued REAL NOT NULL);
                CREATE TABLE queue (
                    only INTEGER PRIMARY KEY CHECK (only = 1),
                    vehicle TEXT NOT NULL,
                    last_seq INTEGER NOT NULL,
                    dropped INTEGER NOT NULL,
                    id TEXT
                );
                """)
            try db.execute(
                sql: "INSERT INTO queue (only, vehicle, last_seq, dropped, id) VALUES (1, ?, 0, 0, ?)",
                arguments: [vehicle.rawValue, QueueID.random().rawValue])
        } else if version == 1 {
            // A queue made before identities keeps none: its fixes still in it may have been sent without one, and
            // are stored under the same key when sent again.
            try db.execute(sql: "ALTER TABLE queue ADD COLUMN id TEXT")
        }
        try db.execute(sql: "PRAGMA user_version = \(schemaVersion)")
        guard let row = try Row.fetchOne(db, sql: "SELECT vehicle, last_seq, dropped, id FROM queue WHERE only = 1") else {
            throw FixQueueError.database("\(path) has no queue row")
        }
        let owner: String = row[0]
        guard owner == vehicle.rawValue else { throw FixQueueError.otherVehicle(found: owner) }
        let newest = try Int64.fetchOne(db, sql: "SELECT max(seq) FROM fixes") ?? 0
        statistics.lastSeq = max(row[1], newest)
        statistics.dropped = row[2]
        statistics.depth = try Int.fetchOne(db, sql: "SELECT count(*) FROM fixes") ?? 0
        statistics.oldestQueuedAt = try oldestQueuedAt(db)
        let identity: String? = row[3]
        guard let identity else { return nil }
        guard let id = try? QueueID(identity) else {
            throw FixQueueError.database("\(path) has a damaged identity (\(identity.debugDescription))")
        }
        return id
    }

    /// Drops the oldest fixes beyond `capacity` and counts them, inside the caller's transaction.
    static func trim(_ db: Database, capacity: Int, statistics: inout FixQueueStatistics) throws {
        let excess = statistics.depth - capacity
        guard excess > 0 else { return }
        // The first seq kept is the one `excess` rows after the oldest.
        try db.cachedStatement(sql: """
            DELETE FROM fixes WHERE seq < (SELECT seq FROM fixes ORDER BY seq LIMIT 1 OFFSET ?)
            """).execute(arguments: [excess])
        let dropped = db.changesCount
        statistics.depth -= dropped
        statistics.dropped += Int64(dropped)
        try db.cachedStatement(sql: "UPDATE queue SET dropped = ?").execute(arguments: [statistics.dropped])
        statistics.oldestQueuedAt = try oldestQueuedAt(db)
    }

    static func oldestQueuedAt(_ db: Database) throws -> Date? {
        let select = try db.cachedStatement(sql: "SELECT queued FROM fixes ORDER BY seq LIMIT 1")
        return try Double.fetchOne(select).map { Date(timeIntervalSince1970: $0) }
    }

    static func fixes(_ select: Statement, arguments: StatementArguments, capacity: Int) throws -> [QueuedFix] {
        var fixes: [QueuedFix] = []
        fixes.reserveCapacity(min(capacity, 1024))
        let rows = try Row.fetchCursor(select, arguments: arguments)
        while let row = try rows.next() {
            let payload = try row.withUnsafeData(atIndex: 1) { data in data.map { [UInt8]($0) } ?? [] }
            fixes.append(QueuedFix(seq: row[0], payload: payload))
        }
        return fixes
    }
}

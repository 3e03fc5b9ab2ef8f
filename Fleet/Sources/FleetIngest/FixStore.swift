public import FleetCore
package import FoundationEssentials
import GPSDLocation
public import Logging
import NIOSSL
import PostgresNIO

/// The fleet's fixes in PostgreSQL with PostGIS: the table `fixes`, written in batches, insert-or-ignore on the
/// dedupe key (vehicle, queue, seq), and the two queries a fleet asks.
///
/// ```sql
/// CREATE TABLE fixes (
///     vehicle text NOT NULL, queue text NOT NULL DEFAULT '',      -- '': a fix sent without its queue's identity
///     seq bigint NOT NULL, time timestamptz NOT NULL,
///     position geography(PointZ, 4326) NOT NULL,   -- Z: the altitude, 0 when unknown
///     altitude double precision,                   -- NULL when unknown
///     horizontal_accuracy, vertical_accuracy, speed, course, climb double precision,
///     fix text NOT NULL, status text NOT NULL, received timestamptz NOT NULL DEFAULT now(),
///     PRIMARY KEY (vehicle, queue, seq))
/// ```
///
/// Every value is bound as a parameter, never written into the SQL.
///
/// ```swift
/// let store = try FixStore(url: "postgresql://fleet:secret@127.0.0.1:5432/fleet", logger: logger)
/// try await withThrowingTaskGroup(of: Void.self) { group in
///     group.addTask { await store.run() }
///     try await store.prepare()
///     let added = try await store.insert(messages)          // committed when it returns
///     let track = try await store.track(of: robot, from: start, to: end)
///     group.cancelAll()
/// }
/// ```
public final class FixStore: Sendable {
    let client: PostgresClient
    let logger: Logger

    /// A store on the database at `url`: `postgresql://user[:password]@host[:port]/database` (also `postgres://`;
    /// port 5432 when none; user name and password percent-encoded). TLS: none, unless the URL asks with
    /// `?sslmode=require` (encrypted, certificate verified against the system's roots) or `?sslmode=prefer`.
    /// Connects only once ``run()`` runs. Throws ``FixStoreError/invalidURL(_:)``.
    ///
    /// `password`, when given, replaces the URL's (read from a file, say, so that it shows in no process list).
    public init(url: String, password: String? = nil, logger: Logger) throws(FixStoreError) {
        var configuration = try Self.configuration(url)
        if let password { configuration.password = password }
        self.client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        self.logger = logger
    }

    /// The client's configuration from a URL.
    static func configuration(_ url: String) throws(FixStoreError) -> PostgresClient.Configuration {
        guard let components = URLComponents(string: url) else { throw .invalidURL("cannot be parsed") }
        guard let scheme = components.scheme, ["postgresql", "postgres"].contains(scheme) else {
            throw .invalidURL("the scheme is not postgresql://")
        }
        guard let host = components.host, !host.isEmpty else { throw .invalidURL("no host") }
        guard let user = components.user, !user.isEmpty else { throw .invalidURL("no user") }
        let database = String(components.path.drop(while: { $0 == "/" }))
        guard !database.isEmpty, !database.contains("/") else { throw .invalidURL("no database, or more than one") }
        let port = components.port ?? 5432
        guard (1...65535).contains(port) else { throw .invalidURL("port \(port) is out of range") }
        let tls: PostgresClient.Configuration.TLS
        switch components.queryItems?.first(where: { $0.name == "sslmode" })?.value {
        case nil, "disable": tls = .disable
        case "prefer": tls = .prefer(.makeClientConfiguration())
        case "require", "verify-full": tls = .require(.makeClientConfiguration())
        case let other?: throw .invalidURL("sslmode \(other) is not one of disable, prefer, require")
        }
        return PostgresClient.Configuration(host: host, port: port, username: user, password: components.password,
                                            database: database, tls: tls)
    }

    /// Runs the connection pool until the task that calls it is cancelled: call it in a task of its own (or a
    /// `ServiceGroup`) before the other methods, which wait for it. Reconnects when the server went away.
    public func run() async {
        await client.run()
    }

    /// Makes what the store needs when it is missing, as the database's owner: the PostGIS extension, the table
    /// `fixes` and its indexes (on (vehicle, time), and GiST on the position), or brings a table made before up to
    /// date; then grants each of `roles` what the ingest needs, INSERT and SELECT on it. Safe to run again.
    /// `fleet-ingest --prepare` runs it; the ingest itself needs no more than those grants (``check()``).
    ///
    /// ```swift
    /// try await store.prepare(grantingTo: ["fleet_ingest"])
    /// ```
    public func prepare(grantingTo roles: [String] = []) async throws {
        let statements: [PostgresQuery] = [
            "CREATE EXTENSION IF NOT EXISTS postgis",
            """
            CREATE TABLE IF NOT EXISTS fixes (
                vehicle text NOT NULL,
                queue text NOT NULL DEFAULT '',
                seq bigint NOT NULL,
                time timestamptz NOT NULL,
                position geography(PointZ, 4326) NOT NULL,
                altitude double precision,
                horizontal_accuracy double precision,
                vertical_accuracy double precision,
                speed double precision,
                course double precision,
                climb double precision,
                fix text NOT NULL,
                status text NOT NULL,
                received timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (vehicle, queue, seq)
            )
            """,
            // A table made before fixes carried their queue's identity: the key gains it.
            "ALTER TABLE fixes ADD COLUMN IF NOT EXISTS queue text NOT NULL DEFAULT ''",
            """
            DO $$ BEGIN
                IF NOT EXISTS (SELECT 1 FROM information_schema.key_column_usage
                               WHERE table_schema = current_schema() AND table_name = 'fixes'
                                     AND constraint_name = 'fixes_pkey' AND column_name = 'queue') THEN
                    ALTER TABLE fixes DROP CONSTRAINT IF EXISTS fixes_pkey,
                        ADD CONSTRAINT fixes_pkey PRIMARY KEY (vehicle, queue, seq);
                END IF;
            END $$
            """,
            "CREATE INDEX IF NOT EXISTS fixes_vehicle_time ON fixes (vehicle, time)",
            "CREATE INDEX IF NOT EXISTS fixes_position ON fixes USING GIST (position)",
        ] + roles.map { role in
            // A role is an identifier, which cannot be bound: quoted as SQL quotes one.
            PostgresQuery(unsafeSQL: "GRANT SELECT, INSERT ON fixes TO \(Self.quotedIdentifier(role))")
        }
        let logger = self.logger
        try await client.withConnection { connection in
            // Two ingests starting at once would race on CREATE … IF NOT EXISTS: one at a time.
            try await connection.query("SELECT pg_advisory_lock(7365002936)", logger: logger)
            do {
                for statement in statements { try await connection.query(statement, logger: logger) }
            } catch {
                _ = try? await connection.query("SELECT pg_advisory_unlock(7365002936)", logger: logger)
                throw error
            }
            try await connection.query("SELECT pg_advisory_unlock(7365002936)", logger: logger)
        }
    }

    /// `name` as SQL quotes an identifier: in double quotes, each double quote doubled.
    static func quotedIdentifier(_ name: String) -> String {
        "\"" + name.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\""
    }

    /// Checks that this role can do the ingest's work: the table `fixes` is there as ``prepare(grantingTo:)`` makes
    /// it (the queue in its key), and the role may insert into it and read it. Throws
    /// ``FixStoreError/notPrepared(_:)`` saying what is missing; a database that cannot be reached, its error.
    public func check() async throws {
        let query: PostgresQuery = """
            SELECT to_regclass('fixes') IS NOT NULL,
                   EXISTS (SELECT 1 FROM pg_index i
                           JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
                           WHERE i.indrelid = to_regclass('fixes') AND i.indisprimary AND a.attname = 'queue'),
                   COALESCE(has_table_privilege(to_regclass('fixes'), 'INSERT'), false),
                   COALESCE(has_table_privilege(to_regclass('fixes'), 'SELECT'), false)
            """
        for try await (present, keyed, insert, select) in try await client.query(query, logger: logger)
            .decode((Bool, Bool, Bool, Bool).self) {
            guard present else { throw FixStoreError.notPrepared("there is no table fixes") }
            guard keyed else { throw FixStoreError.notPrepared("its key has no queue (made by an older fleet-ingest)") }
            guard insert, select else { throw FixStoreError.notPrepared("this role may not insert into it and read it") }
            return
        }
    }

    /// Stores `messages` in one statement, one transaction, skipping each whose (vehicle, queue, seq) is stored
    /// already (`INSERT … SELECT … FROM unnest(…) ON CONFLICT (vehicle, queue, seq) DO NOTHING`). Returns how many
    /// rows were new; they are committed when it returns. Batches of 500 to 1,000 are what it is made for.
    ///
    /// ```swift
    /// let new = try await store.insert(batch)   // 0 when every one was there already
    /// ```
    public func insert(_ messages: [FleetMessage]) async throws -> Int {
        try await insert(rows: messages.map(Row.init))
    }

    /// One row as inserted: strings as they are, unknown numbers nil.
    package struct Row: Sendable {
        package var vehicle: String
        /// The queue's identity; '' when the message had none.
        package var queue: String
        package var seq: Int64
        package var time: Date
        package var latitude: Double
        package var longitude: Double
        package var altitude: Double?
        package var horizontalAccuracy: Double?
        package var verticalAccuracy: Double?
        package var speed: Double?
        package var course: Double?
        package var climb: Double?
        package var fix: String
        package var status: String

        package init(vehicle: String, queue: String = "", seq: Int64, time: Date, latitude: Double,
                     longitude: Double, altitude: Double? = nil, horizontalAccuracy: Double? = nil,
                     verticalAccuracy: Double? = nil, speed: Double? = nil, course: Double? = nil, climb: Double? = nil,
                     fix: String, status: String) {
            (self.vehicle, self.queue, self.seq, self.time) = (vehicle, queue, seq, time)
            (self.latitude, self.longitude, self.altitude) = (latitude, longitude, altitude)
            (self.horizontalAccuracy, self.verticalAccuracy) = (horizontalAccuracy, verticalAccuracy)
            (self.speed, self.course, self.climb, self.fix, self.status) = (speed, course, climb, fix, status)
        }

        init(_ message: FleetMessage) {
            let location = message.location
            self.init(vehicle: message.vehicle.rawValue, queue: message.queue?.rawValue ?? "", seq: message.seq,
                      time: location.timestamp,
                      latitude: location.coordinate.latitude, longitude: location.coordinate.longitude,
                      altitude: location.altitude, horizontalAccuracy: location.horizontalAccuracy,
                      verticalAccuracy: location.verticalAccuracy, speed: location.speed, course: location.course,
                      climb: location.climb, fix: location.fix.rawValue, status: location.status.rawValue)
        }
    }

    /// ``insert(_:)`` for rows: what it does, with any strings (the tests show they are bound, not spliced).
    package func insert(rows: [Row]) async throws -> Int {
        guard !rows.isEmpty else { return 0 }
        // postgres-nio binds arrays of non-optional values: an unknown number travels as NaN and becomes NULL
        // again in the SELECT. No fix has a NaN that is a value (Location's unknowns are nil, never NaN).
        func column(_ value: (Row) -> Double?) -> [Double] { rows.map { value($0) ?? .nan } }
        let query: PostgresQuery = """
            WITH inserted AS (
                INSERT INTO fixes (vehicle, queue, seq, time, position, altitude, horizontal_accuracy,
                                   vertical_accuracy, speed, course, climb, fix, status)
                SELECT vehicle, queue, seq, time,
                       ST_SetSRID(ST_MakePoint(longitude, latitude, COALESCE(NULLIF(altitude, 'NaN'::float8), 0)),
                                  4326)::geography,
                       NULLIF(altitude, 'NaN'::float8), NULLIF(horizontal_accuracy, 'NaN'::float8),
                       NULLIF(vertical_accuracy, 'NaN'::float8), NULLIF(speed, 'NaN'::float8),
                       NULLIF(course, 'NaN'::float8), NULLIF(climb, 'NaN'::float8), fix, status
                FROM unnest(\(rows.map(\.vehicle))::text[], \(rows.map(\.queue))::text[],
                            \(rows.map(\.seq))::bigint[], \(rows.map(\.time))::timestamptz[], \(rows.map(\.latitude))::float8[],
                            \(rows.map(\.longitude))::float8[], \(column(\.altitude))::float8[],
                            \(column(\.horizontalAccuracy))::float8[], \(column(\.verticalAccuracy))::float8[],
                            \(column(\.speed))::float8[], \(column(\.course))::float8[], \(column(\.climb))::float8[],
                            \(rows.map(\.fix))::text[], \(rows.map(\.status))::text[])
                     AS batch(vehicle, queue, seq, time, latitude, longitude, altitude, horizontal_accuracy,
                              vertical_accuracy, speed, course, climb, fix, status)
                ON CONFLICT (vehicle, queue, seq) DO NOTHING
                RETURNING 1
            )
            SELECT count(*) FROM inserted
            """
        for try await count in try await client.query(query, logger: logger).decode(Int64.self) {
            return Int(count)
        }
        return 0
    }
}

public import FleetCore
public import FoundationEssentials
import GPSDLocation
public import Logging
import NIOSSL
import PostgresNIO

/// One stored fix: a row of the table `fixes`, as ``FixStore/track(of:from:to:)`` and
/// ``FixStore/vehicles(inBoxSouth:west:north:east:at:)`` return it. Values the fix did not have are nil.
public struct StoredFix: Sendable, Equatable {
    /// The vehicle that measured the fix.
    public var vehicle: VehicleID
    /// Its sequence number on that vehicle.
    public var seq: Int64
    /// The fix's own time (the location's `timestamp`), to the microsecond.
    public var time: Date
    /// Degrees north, WGS84.
    public var latitude: Double
    /// Degrees east, WGS84.
    public var longitude: Double
    /// Metres above mean sea level; nil when the fix had none (the position's Z is then 0).
    public var altitude: Double?
    /// Estimated horizontal error in metres.
    public var horizontalAccuracy: Double?
    /// Estimated vertical error in metres.
    public var verticalAccuracy: Double?
    /// Speed over ground in metres per second.
    public var speed: Double?
    /// Course over ground in degrees from true north.
    public var course: Double?
    /// Vertical speed in metres per second.
    public var climb: Double?
    /// `2D` or `3D`.
    public var fix: String
    /// How the fix was obtained: `gps`, `dgps`, `rtkFixed`, …
    public var status: String

    public init(vehicle: VehicleID, seq: Int64, time: Date, latitude: Double, longitude: Double, altitude: Double?,
                horizontalAccuracy: Double?, verticalAccuracy: Double?, speed: Double?, course: Double?,
                climb: Double?, fix: String, status: String) {
        self.vehicle = vehicle
        self.seq = seq
        self.time = time
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
        self.horizontalAccuracy = horizontalAccuracy
        self.verticalAccuracy = verticalAccuracy
        self.speed = speed
        self.course = course
        self.climb = climb
        self.fix = fix
        self.status = status
    }
}

/// What ``FixStore`` refuses or could not do.
public enum FixStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The database URL is not `postgresql://user[:password]@host[:port]/database`; the reason says which part.
    case invalidURL(String)
    /// The database returned a row that is not a fix (a vehicle name that cannot be one).
    case invalidRow(String)

    public var description: String {
        switch self {
        case .invalidURL(let reason):
            "not a database URL (postgresql://user[:password]@host[:port]/database): \(reason)"
        case .invalidRow(let reason):
            "the database returned a row that is not a fix: \(reason)"
        }
    }
}

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
    private let client: PostgresClient
    private let logger: Logger

    /// A store on the database at `url`: `postgresql://user[:password]@host[:port]/database` (also `postgres://`;
    /// port 5432 when none; user name and password percent-encoded). TLS: none, unless the URL asks with
    /// `?sslmode=require` (encrypted, certificate verified against the system's roots) or `?sslmode=prefer`.
    /// Connects only once ``run()`` runs. Throws ``FixStoreError/invalidURL(_:)``.
    public init(url: String, logger: Logger) throws(FixStoreError) {
        self.client = PostgresClient(configuration: try Self.configuration(url), backgroundLogger: logger)
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

    /// Makes what the store needs when it is missing: the PostGIS extension, the table `fixes` and its indexes
    /// (on (vehicle, time), and GiST on the position). Safe to call every time: a new database needs no other step.
    ///
    /// ```swift
    /// try await store.prepare()
    /// ```
    public func prepare() async throws {
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
        ]
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

    /// The columns of a ``StoredFix``, in its order, from the table (or a row set) named `f`.
    private static let columns = """
        f.vehicle, f.seq, f.time, ST_Y(f.position::geometry), ST_X(f.position::geometry), f.altitude, \
        f.horizontal_accuracy, f.vertical_accuracy, f.speed, f.course, f.climb, f.fix, f.status
        """

    /// One vehicle's track: its fixes with `from` ≤ time ≤ `to`, in time order (then sequence number). The README's
    /// first query:
    ///
    /// ```sql
    /// SELECT seq, time, ST_Y(position::geometry) AS latitude, ST_X(position::geometry) AS longitude, altitude, speed
    /// FROM fixes WHERE vehicle = $1 AND time BETWEEN $2 AND $3 ORDER BY time, seq;
    /// ```
    ///
    /// ```swift
    /// let track = try await store.track(of: try VehicleID("robot-7"), from: start, to: end)
    /// ```
    public func track(of vehicle: VehicleID, from: Date, to: Date) async throws -> [StoredFix] {
        let query: PostgresQuery = """
            SELECT \(unescaped: Self.columns) FROM fixes f
            WHERE f.vehicle = \(vehicle.rawValue) AND f.time >= \(from) AND f.time <= \(to)
            ORDER BY f.time, f.seq
            """
        return try await fixes(query)
    }

    /// Every vehicle whose newest fix at or before `at` (now when nil) lies within the box from `south` to `north`
    /// and `west` to `east` (degrees; a box with `west` > `east` crosses the antimeridian): that fix, one per vehicle,
    /// in vehicle order. A vehicle whose newest fix lies elsewhere is not in it, wherever it was before. The README's
    /// second query: the newest fix of each vehicle (found through the index on (vehicle, time), one vehicle at a
    /// time), then the box.
    ///
    /// ```swift
    /// let inBerlin = try await store.vehicles(inBoxSouth: 52.3, west: 13.0, north: 52.7, east: 13.8)
    /// ```
    public func vehicles(inBoxSouth south: Double, west: Double, north: Double, east: Double,
                         at: Date? = nil) async throws -> [StoredFix] {
        let at = at ?? Date()
        let query: PostgresQuery = """
            WITH RECURSIVE vehicles(vehicle) AS (
                (SELECT vehicle FROM fixes ORDER BY vehicle LIMIT 1)
                UNION ALL
                SELECT (SELECT n.vehicle FROM fixes n WHERE n.vehicle > v.vehicle ORDER BY n.vehicle LIMIT 1)
                FROM vehicles v WHERE v.vehicle IS NOT NULL
            ),
            newest AS (
                SELECT f.*, ST_Y(f.position::geometry) AS lat, ST_X(f.position::geometry) AS lon
                FROM vehicles v CROSS JOIN LATERAL (
                    SELECT * FROM fixes WHERE fixes.vehicle = v.vehicle AND fixes.time <= \(at)
                    ORDER BY fixes.time DESC, fixes.seq DESC LIMIT 1
                ) f
                WHERE v.vehicle IS NOT NULL
            )
            SELECT vehicle, seq, time, lat, lon, altitude, horizontal_accuracy, vertical_accuracy, speed, course,
                   climb, fix, status
            FROM newest
            WHERE lat BETWEEN \(south) AND \(north)
              AND CASE WHEN \(west)::float8 <= \(east)::float8 THEN lon BETWEEN \(west) AND \(east)
                       ELSE lon >= \(west) OR lon <= \(east) END
            ORDER BY vehicle
            """
        return try await fixes(query)
    }

    private func fixes(_ query: PostgresQuery) async throws -> [StoredFix] {
        var fixes: [StoredFix] = []
        let rows = try await client.query(query, logger: logger)
        let decoded = rows.decode((String, Int64, Date, Double, Double, Double?, Double?, Double?, Double?, Double?,
                                   Double?, String, String).self)
        for try await (vehicle, seq, time, latitude, longitude, altitude, horizontal, vertical, speed, course, climb,
                       fix, status) in decoded {
            guard let id = try? VehicleID(vehicle) else {
                throw FixStoreError.invalidRow("vehicle \(vehicle.debugDescription)")
            }
            fixes.append(StoredFix(vehicle: id, seq: seq, time: time, latitude: latitude, longitude: longitude,
                                   altitude: altitude, horizontalAccuracy: horizontal, verticalAccuracy: vertical,
                                   speed: speed, course: course, climb: climb, fix: fix, status: status))
        }
        return fixes
    }
}

public import FleetCore
public import FoundationEssentials
import PostgresNIO

// The two queries a fleet asks: one vehicle's track, and the vehicles whose newest fix lies in a box.
extension FixStore {
    /// The columns of a ``StoredFix``, in its order, from the table (or a row set) named `f`.
    static let columns = """
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

    func fixes(_ query: PostgresQuery) async throws -> [StoredFix] {
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

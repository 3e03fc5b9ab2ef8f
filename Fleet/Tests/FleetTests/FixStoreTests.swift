import FleetCore
import FleetIngest
import FleetTestSupport
import Foundation
import GPSDLocation
import Logging
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The PostGIS writer against a real PostgreSQL 15 with PostGIS 3.3, one server per test.
@Suite("FixStore", .serialized, .enabled(if: PostgreSQL.isAvailable, "PostgreSQL 15 is not installed"),
       .timeLimit(.minutes(5)))
struct FixStoreTests {
    /// 2025-06-01T12:00:00Z.
    static let start = Date(timeIntervalSince1970: 1_748_779_200)

    /// A server with a database `fleet`, a store on it whose pool runs for `body`'s duration.
    func withStore(prepare: Bool = true,
                   _ body: (PostgreSQL, FixStore) async throws -> Void) async throws {
        let server = try await PostgreSQL.start()
        do {
            try await server.createDatabase("fleet")
            let store = try FixStore(url: server.url(database: "fleet"), logger: Logger(label: "FixStoreTests"))
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await store.run() }
                defer { group.cancelAll() }
                if prepare { try await store.prepare() }
                try await body(server, store)
            }
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    func message(_ vehicle: String, _ seq: Int64, seconds: Double, latitude: Double, longitude: Double,
                 altitude: Double? = nil) throws -> FleetMessage {
        FleetMessage(vehicle: try VehicleID(vehicle), seq: seq, location: Location(
            coordinate: .init(latitude: latitude, longitude: longitude), altitude: altitude,
            horizontalAccuracy: 2.5, verticalAccuracy: altitude == nil ? nil : 4.25, speed: 1.5, course: 270.5,
            climb: altitude == nil ? nil : -0.125, timestamp: Self.start.addingTimeInterval(seconds),
            fix: altitude == nil ? .twoDimensional : .threeDimensional, status: .dgps))
    }

    func stored(_ message: FleetMessage) -> StoredFix {
        let location = message.location
        return StoredFix(vehicle: message.vehicle, seq: message.seq, time: location.timestamp,
                         latitude: location.coordinate.latitude, longitude: location.coordinate.longitude,
                         altitude: location.altitude, horizontalAccuracy: location.horizontalAccuracy,
                         verticalAccuracy: location.verticalAccuracy, speed: location.speed, course: location.course,
                         climb: location.climb, fix: location.fix.rawValue, status: location.status.rawValue)
    }

    /// A thousand distinct fixes of one vehicle, every value different from its neighbours'.
    func thousand(_ vehicle: String = "robot-7", from first: Int64 = 1) throws -> [FleetMessage] {
        try (first..<first + 1000).map { seq in
            let i = Double(seq)
            return try message(vehicle, seq, seconds: i * 0.5, latitude: 52.5 + i * 1e-5 + 1e-9 / 3,
                               longitude: 13.4 - i * 1e-5, altitude: 30 + i * 0.25)
        }
    }

    @Test("prepare() makes the extension, the table and its indexes; again, it changes nothing")
    func prepareMakesTheSchema() async throws {
        try await withStore(prepare: false) { server, store in
            #expect(try await server.psql("SELECT to_regclass('fixes') IS NULL", database: "fleet") == "t")
            try await store.prepare()
            try await store.prepare()
            #expect(try await server.psql("SELECT extname FROM pg_extension WHERE extname = 'postgis'",
                                          database: "fleet") == "postgis")
            let columns = try await server.psql("""
                SELECT attname || ' ' || format_type(atttypid, atttypmod) || ' ' || attnotnull FROM pg_attribute
                WHERE attrelid = 'fixes'::regclass AND attnum > 0 ORDER BY attnum
                """, database: "fleet")
            #expect(columns.split(separator: "\n") == [
                "vehicle text true", "queue text true", "seq bigint true", "time timestamp with time zone true",
                "position geography(PointZ,4326) true", "altitude double precision false",
                "horizontal_accuracy double precision false", "vertical_accuracy double precision false",
                "speed double precision false", "course double precision false", "climb double precision false",
                "fix text true", "status text true", "received timestamp with time zone true",
            ])
            let indexes = try await server.psql(
                "SELECT indexdef FROM pg_indexes WHERE tablename = 'fixes' ORDER BY indexdef", database: "fleet")
            #expect(indexes.contains("USING btree (vehicle, queue, seq)"))
            #expect(indexes.contains("USING btree (vehicle, \"time\")"))
            #expect(indexes.contains("USING gist (\"position\")"))
            #expect(indexes.split(separator: "\n").count == 3)
        }
    }

    @Test("check() says what is missing until an owner has prepared the table for the role")
    func checkSaysWhatIsMissing() async throws {
        try await withStore(prepare: false) { server, store in
            await #expect(throws: FixStoreError.notPrepared("there is no table fixes")) { try await store.check() }
            try await store.prepare()
            try await store.check()
        }
    }

    @Test("A role with only INSERT and SELECT, its password from outside the URL, stores and reads, and cannot prepare")
    func anIngestRoleNeedsOnlyTheGrantsPrepareGives() async throws {
        try await withStore(prepare: false) { server, owner in
            // The server asks this role for its password (SCRAM): a store without it could not connect.
            try await server.createRole("fleet_ingest", password: "p@ss:w/rd%")
            let url = "postgresql://fleet_ingest@127.0.0.1:\(server.port)/fleet"
            try await withRoleStore(url: url, password: "p@ss:w/rd%") { ingest in
                await #expect(throws: FixStoreError.notPrepared("there is no table fixes")) { try await ingest.check() }
                try await owner.prepare()
                await #expect(throws: FixStoreError.notPrepared("this role may not insert into it and read it")) {
                    try await ingest.check()
                }
                try await owner.prepare(grantingTo: ["fleet_ingest"])
                try await ingest.check()
                #expect(try await ingest.insert(try thousand()) == 1000)
                #expect(try await ingest.track(of: try VehicleID("robot-7"), from: Self.start,
                                               to: Self.start.addingTimeInterval(86_400)).count == 1000)
                await #expect(throws: (any Error).self, "only the owner alters the table") { try await ingest.prepare() }
            }
        }
    }

    func withRoleStore(url: String, password: String, _ body: (FixStore) async throws -> Void) async throws {
        let store = try FixStore(url: url, password: password, logger: Logger(label: "FixStoreTests"))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await store.run() }
            defer { group.cancelAll() }
            try await body(store)
        }
    }

    @Test("One seq of one vehicle from two queues is two fixes; from one queue, one")
    func theQueueIsPartOfTheKey() async throws {
        try await withStore { server, store in
            let old = try QueueID("00000000000000aa"), new = try QueueID("00000000000000bb")
            var fixes: [FleetMessage] = []
            for queue in [nil, old, new] {
                var fix = try message("robot-7", 1, seconds: 0, latitude: 52.5, longitude: 13.4)
                fix.queue = queue
                fixes.append(fix)
            }
            #expect(try await store.insert(fixes) == 3)
            #expect(try await store.insert(fixes) == 0, "each again: the same three keys")
            #expect(try await server.psql("SELECT string_agg(queue, ',' ORDER BY queue) FROM fixes",
                                          database: "fleet") == ",00000000000000aa,00000000000000bb")
        }
    }

    @Test("prepare() gives a table made before queues had identities the queue in its key, its rows kept")
    func prepareUpgradesAnOlderTable() async throws {
        try await withStore(prepare: false) { server, store in
            _ = try await server.psql("""
                CREATE EXTENSION postgis;
                CREATE TABLE fixes (vehicle text NOT NULL, seq bigint NOT NULL, time timestamptz NOT NULL,
                    position geography(PointZ, 4326) NOT NULL, altitude double precision,
                    horizontal_accuracy double precision, vertical_accuracy double precision, speed double precision,
                    course double precision, climb double precision, fix text NOT NULL, status text NOT NULL,
                    received timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (vehicle, seq));
                INSERT INTO fixes (vehicle, seq, time, position, fix, status)
                    VALUES ('robot-7', 1, now(), 'SRID=4326;POINTZ(13.4 52.5 0)', '3D', 'gps');
                """, database: "fleet")
            try await store.prepare()
            try await store.prepare()
            #expect(try await server.psql("SELECT vehicle || ' ' || queue || '|' || seq FROM fixes",
                                          database: "fleet") == "robot-7 |1")
            var fix = try message("robot-7", 1, seconds: 0, latitude: 52.5, longitude: 13.4)
            fix.queue = try QueueID("0123456789abcdef")
            #expect(try await store.insert([fix]) == 1, "a new queue's seq 1 is a new fix")
            #expect(try await server.psql("""
                SELECT string_agg(a.attname, ',' ORDER BY array_position(i.indkey, a.attnum))
                FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
                WHERE i.indrelid = 'fixes'::regclass AND i.indisprimary
                """, database: "fleet") == "vehicle,queue,seq")
        }
    }

    @Test("1,000 fixes are 1,000 rows with every value; the same batch again adds none")
    func insertsAndDedupes() async throws {
        try await withStore { server, store in
            let batch = try thousand()
            #expect(try await store.insert(batch) == 1000)
            let lines = try await server.psql("""
                SELECT seq, ST_Y(position::geometry), ST_X(position::geometry), ST_Z(position::geometry), altitude,
                       horizontal_accuracy, vertical_accuracy, speed, course, climb,
                       extract(epoch FROM time)::float8, fix, status, vehicle
                FROM fixes ORDER BY seq
                """, database: "fleet").split(separator: "\n")
            #expect(lines.count == 1000)
            for (line, message) in zip(lines, batch) {
                let location = message.location
                let expected = [
                    String(message.seq), "\(location.coordinate.latitude)", "\(location.coordinate.longitude)",
                    "\(location.altitude!)", "\(location.altitude!)", "\(location.horizontalAccuracy!)",
                    "\(location.verticalAccuracy!)", "\(location.speed!)", "\(location.course!)",
                    "\(location.climb!)", "\(location.timestamp.timeIntervalSince1970)", "3D", "dgps", "robot-7",
                ]
                let columns = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
                // Numbers compared as numbers: psql prints the shortest text that reads back exactly.
                #expect(columns.count == expected.count)
                for (column, want) in zip(columns, expected) {
                    if let number = Double(want) {
                        #expect(Double(column) == number, "\(line)")
                    } else {
                        #expect(column == want, "\(line)")
                    }
                }
            }
            #expect(try await store.insert(batch) == 0)
            #expect(try await store.insert(Array(batch[500...]) + thousand(from: 1001)[..<500]) == 500)
            #expect(try await server.psql("SELECT count(*), max(seq) FROM fixes", database: "fleet") == "1500|1500")
            #expect(try await store.insert([]) == 0)
        }
    }

    @Test("Values the fix did not have are NULL, and its position's Z is 0")
    func unknownsAreNull() async throws {
        try await withStore { server, store in
            let bare = FleetMessage(vehicle: try VehicleID("bare"), seq: 1, location: Location(
                coordinate: .init(latitude: -33.8568, longitude: 151.2153), timestamp: Self.start,
                fix: .twoDimensional, status: .gps))
            // Zero is a value, not an unknown.
            let zeros = FleetMessage(vehicle: try VehicleID("zeros"), seq: 1, location: Location(
                coordinate: .init(latitude: 0, longitude: 0), altitude: 0, horizontalAccuracy: 0,
                verticalAccuracy: 0, speed: 0, course: 0, climb: 0, timestamp: Self.start))
            #expect(try await store.insert([bare, zeros]) == 2)
            let rows = try await server.psql("""
                SELECT vehicle, altitude IS NULL, horizontal_accuracy IS NULL, vertical_accuracy IS NULL,
                       speed IS NULL, course IS NULL, climb IS NULL, ST_Z(position::geometry), fix, status
                FROM fixes ORDER BY vehicle
                """, database: "fleet")
            #expect(rows == "bare|t|t|t|t|t|t|0|2D|gps\nzeros|f|f|f|f|f|f|0|3D|gps")
            let track = try await store.track(of: bare.vehicle, from: Self.start, to: Self.start)
            #expect(track == [stored(bare)])
            #expect(track.first?.altitude == nil)
        }
    }

    @Test("Vehicle, fix and status strings with quotes and semicolons are stored as they are")
    func stringsAreBound() async throws {
        try await withStore { server, store in
            let hostile = [
                FixStore.Row(vehicle: "robot'); DROP TABLE fixes; --", seq: 1, time: Self.start, latitude: 1,
                             longitude: 2, fix: "3D'||'", status: "gps'; DELETE FROM fixes; --"),
                FixStore.Row(vehicle: "$1 \\' \"x\"; $2", seq: 2, time: Self.start, latitude: 3, longitude: 4,
                             fix: "2D", status: "';--"),
            ]
            #expect(try await store.insert(rows: hostile) == 2)
            #expect(try await store.insert(rows: hostile) == 0)
            let rows = try await server.psql(
                "SELECT vehicle || '|' || fix || '|' || status FROM fixes ORDER BY seq", database: "fleet")
            #expect(rows == """
                robot'); DROP TABLE fixes; --|3D'||'|gps'; DELETE FROM fixes; --
                $1 \\' "x"; $2|2D|';--
                """)
        }
    }
}

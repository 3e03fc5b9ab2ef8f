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

// The store's queries, its restart and its URLs.
extension FixStoreTests {
    @Test("The track query: one vehicle's fixes in the range, ends included, in time order")
    func trackQuery() async throws {
        try await withStore { _, store in
            let fleet = try smallFleet()
            // Stored out of order: the query orders them.
            #expect(try await store.insert(fleet.reversed()) == fleet.count)
            let alpha = try VehicleID("alpha")
            let alphas = fleet.filter { $0.vehicle == alpha }.map(stored)
            #expect(try await store.track(of: alpha, from: Self.start.addingTimeInterval(5),
                                          to: Self.start.addingTimeInterval(20)) == Array(alphas[1...2]))
            #expect(try await store.track(of: alpha, from: Self.start,
                                          to: Self.start.addingTimeInterval(10)) == Array(alphas[0...1]))
            #expect(try await store.track(of: alpha, from: Self.start.addingTimeInterval(21),
                                          to: Self.start.addingTimeInterval(1000)) == [])
            #expect(try await store.track(of: VehicleID("nobody"), from: Self.start,
                                          to: Self.start.addingTimeInterval(1000)) == [])
        }
    }

    /// Berlin (52.5, 13.4), Paris (48.85, 2.35), London (51.5, -0.12), Fiji (-17.8, 179.5), over 40 seconds.
    func smallFleet() throws -> [FleetMessage] {
        [
            try message("alpha", 1, seconds: 0, latitude: 52.52, longitude: 13.40, altitude: 34),
            try message("alpha", 2, seconds: 10, latitude: 52.51, longitude: 13.41),
            try message("alpha", 3, seconds: 20, latitude: 48.85, longitude: 2.35, altitude: 35),
            try message("bravo", 1, seconds: 0, latitude: 48.86, longitude: 2.34),
            try message("bravo", 2, seconds: 15, latitude: 52.40, longitude: 13.05, altitude: 40),
            try message("charlie", 1, seconds: 5, latitude: 52.60, longitude: 13.70),
            try message("charlie", 2, seconds: 40, latitude: 51.50, longitude: -0.12, altitude: 11),
            try message("delta", 1, seconds: 1, latitude: -17.8, longitude: 179.5),
        ]
    }

    @Test("The box query: each vehicle whose newest fix at that time lies in the box, that fix, once")
    func boxQuery() async throws {
        try await withStore { _, store in
            let fleet = try smallFleet()
            #expect(try await store.insert(fleet) == fleet.count)
            func fix(_ vehicle: String, _ seq: Int64) -> StoredFix? {
                fleet.first { $0.vehicle.rawValue == vehicle && $0.seq == seq }.map(stored)
            }
            func berlin(at seconds: Double?) async throws -> [StoredFix] {
                try await store.vehicles(inBoxSouth: 52, west: 13, north: 53, east: 14,
                                         at: seconds.map { Self.start.addingTimeInterval($0) })
            }
            // alpha was in Berlin at 0 and 10 but is in Paris from 20: not in it at 25.
            #expect(try await berlin(at: 25) == [fix("bravo", 2), fix("charlie", 1)].compactMap { $0 })
            #expect(try await berlin(at: 12) == [fix("alpha", 2), fix("charlie", 1)].compactMap { $0 })
            #expect(try await berlin(at: 10) == [fix("alpha", 2), fix("charlie", 1)].compactMap { $0 })
            #expect(try await berlin(at: nil) == [fix("bravo", 2)].compactMap { $0 })
            #expect(try await berlin(at: -1) == [])
            #expect(try await store.vehicles(inBoxSouth: 48, west: 2, north: 49, east: 3,
                                             at: Self.start.addingTimeInterval(25)) == [fix("alpha", 3)].compactMap { $0 })
            // Across the antimeridian: from 179° east to 179° west.
            #expect(try await store.vehicles(inBoxSouth: -20, west: 179, north: -15, east: -179)
                    == [fix("delta", 1)].compactMap { $0 })
            #expect(try await store.vehicles(inBoxSouth: -20, west: -179, north: -15, east: 179) == [])
        }
    }

    @Test("PostgreSQL SIGKILLed and restarted: the store reconnects, and every committed row is there")
    func survivesServerKill() async throws {
        try await withStore { server, store in
            #expect(try await store.insert(thousand()) == 1000)
            await server.kill(SIGKILL)
            try await server.restart()
            #expect(try await store.insert(thousand(from: 1001)) == 1000)
            #expect(try await server.psql("SELECT count(*), count(DISTINCT seq), min(seq), max(seq) FROM fixes",
                                          database: "fleet") == "2000|2000|1|2000")
            #expect(try await store.track(of: VehicleID("robot-7"), from: Self.start,
                                          to: Self.start.addingTimeInterval(10_000)).count == 2000)
        }
    }

    @Test("A URL that is not a database's is refused, saying why", arguments: [
        "mysql://root@127.0.0.1/fleet", "postgresql://127.0.0.1:5432/fleet", "postgresql://fleet@/fleet",
        "postgresql://fleet@127.0.0.1:5432", "postgresql://fleet@127.0.0.1:5432/a/b", "not a url",
        "postgresql://fleet@127.0.0.1/fleet?sslmode=sometimes",
    ])
    func badURLs(url: String) {
        #expect(throws: FixStoreError.self) { try FixStore(url: url, logger: Logger(label: "FixStoreTests")) }
    }

    @Test("A good URL is accepted")
    func goodURL() throws {
        _ = try FixStore(url: "postgresql://fleet:s%40cret@db.example:6543/fleet?sslmode=disable",
                         logger: Logger(label: "FixStoreTests"))
        _ = try FixStore(url: "postgres://fleet@127.0.0.1/fleet", logger: Logger(label: "FixStoreTests"))
    }

    /// Not a test of speed (no bound on time): it prints the ingest's rate when FLEET_MEASURE_INGEST is set.
    @Test("Ingest rate: 50 batches of 1,000", .enabled(if: ProcessInfo.processInfo.environment["FLEET_MEASURE_INGEST"] != nil))
    func measureIngest() async throws {
        try await withStore { server, store in
            let batches = try (0..<50).map { try thousand("robot-\($0 % 5)", from: Int64($0 / 5) * 1000 + 1) }
            let clock = ContinuousClock()
            var total = 0
            let elapsed = try await clock.measure {
                for batch in batches { total += try await store.insert(batch) }
            }
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
            print("ingest: \(total) rows in \(seconds) s: \(Int(Double(total) / seconds)) rows/s")
            #expect(total == 50_000)
            #expect(try await server.psql("SELECT count(*) FROM fixes", database: "fleet") == "50000")
        }
    }
}

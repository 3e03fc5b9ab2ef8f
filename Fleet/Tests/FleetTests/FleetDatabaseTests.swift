import FleetTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The ingest and its database, with `fleet-uplink` and `fleet-ingest` as processes against a real Mosquitto and
/// PostgreSQL: a least-privilege role, its password from a file, and an outage told once.
@Suite(.serialized, .enabled(if: Mosquitto.isAvailable && PostgreSQL.isAvailable), .timeLimit(.minutes(10)))
struct FleetDatabaseTests {
    /// The ingest runs as a role with INSERT and SELECT on the table only, once its owner has prepared it
    /// (`fleet-ingest --prepare --grant-to`), its password in a file (never on the command line): every fix stored.
    @Test func anIngestWithInsertAndSelectOnlyStoresEveryFix() async throws {
        try await FleetHarness.with { fleet in
            try await fleet.database.createRole("fleet_ingest", password: "p@ss:w/rd%")
            try await fleet.prepareDatabase(grantingTo: ["fleet_ingest"])
            let passwordFile = fleet.path("database-password")
            try "p@ss:w/rd%\n".write(toFile: passwordFile, atomically: true, encoding: .utf8)
            let role = "postgresql://fleet_ingest@127.0.0.1:\(fleet.database.port)/postgres"
            let ingest = try await fleet.startIngest(["--database-password-file", passwordFile], database: role)
            let uplink = try fleet.startUplink(vehicle: "robot-8", replay: try fleet.recording("drive.json", count: 100))
            #expect(await uplink.waitForExit(timeout: .seconds(240)) == 0)
            try await fleet.waitForRows("robot-8", atLeast: 100, timeout: .seconds(120))
            #expect(try await fleet.storedSeqs("robot-8") == (1...100).map(Int64.init))
            #expect(!ingest.commandLine.contains("p@ss"), "no secret on the command line")
        }
    }

    /// PostgreSQL killed while fixes come, and started again later: the ingest says once that the database is
    /// away and how many fixes it holds, once when it took them, and stores every fix.
    @Test func aDatabaseOutageIsToldOnceWithWhatIsHeld() async throws {
        try await FleetHarness.with { fleet in
            let ingest = try await fleet.startIngest()
            let warm = try fleet.startUplink(vehicle: "robot-9", replay: try fleet.recording("warm.json", count: 10))
            #expect(await warm.waitForExit(timeout: .seconds(240)) == 0)
            try await fleet.waitForRows("robot-9", atLeast: 10)
            await fleet.database.kill(SIGKILL)
            let later = FleetRecording.defaultStart.addingTimeInterval(3600)
            let uplink = try fleet.startUplink(vehicle: "robot-10",
                                               replay: try fleet.recording("later.json", count: 50, start: later))
            #expect(await uplink.waitForExit(timeout: .seconds(240)) == 0, "the broker has them")
            try await fleet.waitUntil("the ingest tells the outage") { ingest.output.contains("unacknowledged") }
            // A while longer away: long enough for several of the ingest's tries.
            try await Task.sleep(for: .seconds(8))
            try await fleet.database.restart()
            try await fleet.waitForRows("robot-10", atLeast: 50, timeout: .seconds(120))
            try await fleet.waitUntil("the ingest tells the end of the outage") { ingest.output.contains("took the") }
            let told = ingest.output.components(separatedBy: "\n").filter { $0.contains("unacknowledged") }
            #expect(told.count == 1, "told once: \(told)")
            #expect(try await fleet.storedSeqs("robot-10") == (1...50).map(Int64.init))
        }
    }
}

import FleetTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The ingest back to a backlog that its session kept at the broker, with fleet-uplink and fleet-ingest as
/// processes against a real Mosquitto (1,000 messages in flight a client) and PostgreSQL.
@Suite(.serialized, .enabled(if: Mosquitto.isAvailable && PostgreSQL.isAvailable), .timeLimit(.minutes(10)))
struct IngestBacklogTests {
    /// 2,000 fixes queued for the ingest's session while it was away, then the ingest back with batches of 100: the
    /// broker sends 1,000 at once, more than the ingest reads ahead. Its session was kept, so it does not subscribe
    /// again (the SUBACK would come behind messages it does not read yet), and it stores them all on one connection.
    @Test func aBacklogKeptForTheSessionIsStoredInSmallBatches() async throws {
        try await FleetHarness.with { fleet in
            let first = try await fleet.startIngest()
            await first.stop(SIGTERM)
            let uplink = try fleet.startUplink(vehicle: "robot-11", replay: try fleet.recording("drive.json", count: 2000))
            #expect(await uplink.waitForExit(timeout: .seconds(240)) == 0, "the broker has them")
            let ingest = try await fleet.startIngest(["--batch-size", "100"])
            try await fleet.waitForRows("robot-11", atLeast: 2000, timeout: .seconds(120))
            #expect(try await fleet.storedSeqs("robot-11") == (1...2000).map(Int64.init))
            #expect(ingest.output.contains("the broker's session kept"), "\(ingest.output)")
            #expect(ingest.output.components(separatedBy: "subscribed to").count - 1 == 1, "one connection")
        }
    }
}

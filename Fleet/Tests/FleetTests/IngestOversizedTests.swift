import FleetCore
import FleetTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// fleet-ingest against a real broker and database, given a PUBLISH larger than it reads: the message is refused,
/// acknowledged and counted, and the one connection goes on storing fixes.
@Suite(.serialized, .enabled(if: Mosquitto.isAvailable && PostgreSQL.isAvailable), .timeLimit(.minutes(5)))
struct IngestOversizedTests {
    /// 2 MB: above the decoder's 1 MiB + 64 KiB, so its bytes are skipped, never buffered.
    static let oversized = [UInt8](repeating: UInt8(ascii: "x"), count: 2_000_000)

    @Test("a 2 MB QoS 1 message in the ingest's session, then a valid fix: the fix is stored on the first connection")
    func oversizedInSession() async throws {
        try await FleetHarness.with { fleet in
            let metricsFile = fleet.path("ingest.prom")
            let ingest = try await fleet.startIngest(["--metrics-file", metricsFile])
            try FleetFaultTests.publish(port: fleet.broker.port, topic: "fleet/poison/fix", bytes: Self.oversized)
            try FleetFaultTests.publish(port: fleet.broker.port, topic: "fleet/ap/fix", payload: try Self.fix("ap"))
            try await fleet.waitForRows("ap", atLeast: 1, timeout: .seconds(60))
            await ingest.stop(SIGTERM)
            #expect(Self.connections(in: ingest.output) == 1, "\(ingest.output)")
            let metrics = try String(contentsOfFile: metricsFile, encoding: .utf8)
            #expect(metrics.contains(#"fleet_ingest_rejected_total{reason="too_large"} 1"#), "\(metrics)")
            #expect(metrics.contains("fleet_ingest_stored_total 1"), "\(metrics)")
        }
    }

    @Test("a retained 2 MB message is refused once at the subscription and makes the ingest reconnect no more")
    func retainedOversized() async throws {
        try await FleetHarness.with { fleet in
            try FleetFaultTests.publish(port: fleet.broker.port, topic: "fleet/ret/fix", bytes: Self.oversized,
                                        retain: true)
            let ingest = try await fleet.startIngest()
            // Published after the subscription: the broker sends it after the retained message.
            try FleetFaultTests.publish(port: fleet.broker.port, topic: "fleet/ap/fix", payload: try Self.fix("ap"))
            try await fleet.waitForRows("ap", atLeast: 1, timeout: .seconds(60))
            await ingest.stop(SIGTERM)
            #expect(Self.connections(in: ingest.output) == 1, "\(ingest.output)")
            #expect(!ingest.output.contains("the broker sent"), "\(ingest.output)")
        }
    }

    /// How many times the ingest subscribed: once a connection.
    static func connections(in output: String) -> Int {
        output.components(separatedBy: "subscribed to").count - 1
    }

    static func fix(_ vehicle: String) throws -> String {
        let message = FleetMessage(vehicle: try VehicleID(vehicle), seq: 1, location: FleetFaultTests.fix(epoch: 1))
        return String(decoding: try message.payload(), as: UTF8.self)
    }
}

import FleetCore
import FleetTestSupport
import FleetUplink
import Foundation
import GPSDLocation
import Testing
#if canImport(Glibc)
import Glibc
#endif

// Hostile payloads among good fixes: each refused and counted, every good fix stored.
extension FleetFaultTests {
    /// Hostile payloads at the ingest, between good ones: each refused, counted and logged once per reason; the good
    /// ones stored; the ingest goes on.
    @Test func hostilePayloads() async throws {
        try await FleetHarness.with { fleet in
            let metricsFile = fleet.path("ingest.prom")
            let ingest = try await fleet.startIngest(["--metrics-file", metricsFile])
            let vehicle = try VehicleID("robot-7")
            let good = try (1...5).map { String(decoding: try FleetMessage(vehicle: vehicle, seq: Int64($0),
                                                                          location: Self.fix(epoch: $0)).payload(), as: UTF8.self) }
            let valid = good[0]
            let hostile: [(topic: String, payload: [UInt8])] = [
                ("fleet/robot-7/fix", Array("not json".utf8)),
                ("fleet/robot-7/fix", []),
                ("fleet/robot-7/fix", Array("{}".utf8)),
                ("fleet/robot-7/fix", Array("[1,2,3]".utf8)),
                ("fleet/robot-7/fix", [0xFF, 0xFE, 0x00, 0x7B]),
                ("fleet/robot-7/fix", Array(valid.replacingOccurrences(of: "\"latitude\":52.5", with: "\"latitude\":91.5").utf8)),
                ("fleet/robot-7/fix", Array(valid.replacingOccurrences(of: "2025-06-01T", with: "2025-13-01T").utf8)),
                ("fleet/robot-7/fix", Array(valid.replacingOccurrences(of: "\"seq\":1,", with: "\"seq\":0,").utf8)),
                ("fleet/robot-7/fix", Array(valid.replacingOccurrences(of: "\"seq\":1,", with: "\"seq\":\"1\",").utf8)),
                ("fleet/robot-7/fix", Array(valid.replacingOccurrences(of: "\"horizontalAccuracy\":2.5", with: "\"horizontalAccuracy\":-2.5").utf8)),
                ("fleet/robot-7/fix", Array(valid.replacingOccurrences(of: "\"_type\":\"location\"", with: "\"_type\":\"waypoint\"").utf8)),
                ("fleet/robot-7/fix", Array(valid.replacingOccurrences(of: "\"latitude\":52.5", with: "\"latitude\":1e999").utf8)),
                ("fleet/robot-7/fix", Array((String(repeating: "[", count: 3000) + String(repeating: "]", count: 3000)).utf8)),
                ("fleet/robot-7/fix", Array(valid.dropLast(20).utf8)),
                ("fleet/robot-7/fix", Array((valid.dropLast() + ",\"pad\":\"" + String(repeating: "x", count: 5000) + "\"}").utf8)),
                ("fleet/robot-8/fix", Array(valid.utf8)),
                ("fleet/robot 9/fix", Array(valid.utf8)),
            ]
            var sent = 0
            for (index, message) in hostile.enumerated() {
                if index % 4 == 0, sent < good.count {
                    try Self.publish(port: fleet.broker.port, topic: "fleet/robot-7/fix", payload: good[sent])
                    sent += 1
                }
                try Self.publish(port: fleet.broker.port, topic: message.topic, bytes: message.payload)
            }
            while sent < good.count {
                try Self.publish(port: fleet.broker.port, topic: "fleet/robot-7/fix", payload: good[sent])
                sent += 1
            }
            try await fleet.waitForRows("robot-7", atLeast: 5)
            #expect(ingest.isRunning)
            await ingest.stop(SIGTERM)
            #expect(try await fleet.storedSeqs("robot-7") == [1, 2, 3, 4, 5])
            #expect(try await fleet.storedCount("robot-8") == 0)
            // "fleet/robot 9/fix" is not a fix topic of a valid vehicle name; the subscription matches it.
            let refused = try #require(Self.number(before: " refused", in: ingest.output))
            #expect(refused == hostile.count)
            let logged = ingest.output.components(separatedBy: "refused a message:").count - 1
            let reasons = Set(ingest.output.split(separator: "\n").compactMap { line -> Substring? in
                guard let range = line.range(of: "(counted as ") else { return nil }
                return line[range.upperBound...].prefix { $0 != ";" }
            })
            #expect(logged == reasons.count, "each reason logged once")
            let metrics = try String(contentsOfFile: metricsFile, encoding: .utf8)
            #expect(metrics.contains(#"fleet_ingest_rejected_total{reason="vehicle_mismatch"} 1"#), "\(metrics)")
            #expect(metrics.contains("fleet_ingest_stored_total 5"), "\(metrics)")
            #expect(reasons.isSuperset(of: ["not_json", "impossible_latitude", "impossible_timestamp", "impossible_seq",
                                            "impossible_horizontalAccuracy", "not_a_location", "vehicle_mismatch",
                                            "too_large", "not_a_fix_topic"]), "\(reasons.sorted())")
        }
    }
}

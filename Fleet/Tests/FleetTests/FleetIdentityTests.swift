import FleetTestSupport
import Foundation
import Testing

/// Whose fixes are whose: a queue made again, and two uplinks run as one vehicle, with `fleet-uplink` and
/// `fleet-ingest` as processes against a real Mosquitto and PostgreSQL. Each used to lose fixes as "duplicates": the
/// key was (vehicle, seq), and both cases number from 1 again.
@Suite(.serialized, .enabled(if: Mosquitto.isAvailable && PostgreSQL.isAvailable), .timeLimit(.minutes(10)))
struct FleetIdentityTests {
    /// A vehicle's queue directory lost (a new SD card, a damaged file removed): its new queue numbers from 1
    /// again, under a new identity, and every fix of both is stored.
    @Test func aQueueMadeAgainIsNotTakenForAReplay() async throws {
        try await FleetHarness.with { fleet in
            let ingest = try await fleet.startIngest()
            let first = try fleet.startUplink(vehicle: "robot-5", replay: try fleet.recording("first.json", count: 150))
            #expect(await first.waitForExit(timeout: .seconds(240)) == 0)
            try await fleet.waitForRows("robot-5", atLeast: 150)
            try FileManager.default.removeItem(atPath: fleet.queueDirectory("robot-5"))
            let later = FleetRecording.defaultStart.addingTimeInterval(86_400)
            let second = try fleet.startUplink(vehicle: "robot-5",
                                               replay: try fleet.recording("second.json", count: 150, start: later))
            #expect(await second.waitForExit(timeout: .seconds(240)) == 0)
            #expect(second.output.contains("150 fixes acknowledged"), "\(second.output)")
            try await fleet.waitForRows("robot-5", atLeast: 300, timeout: .seconds(120))
            #expect(try await fleet.storedCount("robot-5") == 300)
            #expect(try await fleet.storedSeqs("robot-5") == (1...150).flatMap { [Int64($0), Int64($0)] })
            #expect(ingest.output.contains("vehicle robot-5 sends from a new queue"), "\(ingest.output)")
        }
    }

    /// Two uplinks started with one `--vehicle` (each with its own queue), at once: neither takes the other's
    /// connection, every fix of both is stored, and the ingest says so as an error.
    @Test func twoUplinksAsOneVehicleAreBothStoredAndTold() async throws {
        try await FleetHarness.with { fleet in
            let ingest = try await fleet.startIngest()
            let recording = try fleet.recording("drive.json", count: 174)
            // Paced (25 epochs a second), so that both send for several seconds at once.
            let uplinks = try ["a", "b"].map { name in
                try fleet.startUplink(vehicle: "robot-6", replay: recording, speed: 25,
                                      queue: fleet.path("queue-robot-6-\(name)"))
            }
            for uplink in uplinks { #expect(await uplink.waitForExit(timeout: .seconds(240)) == 0) }
            try await fleet.waitForRows("robot-6", atLeast: 348, timeout: .seconds(120))
            #expect(try await fleet.storedCount("robot-6") == 348)
            for uplink in uplinks {
                #expect(uplink.output.components(separatedBy: "[FleetUplink] connected to").count - 1 == 1,
                        "one connection each, never taken over: \(uplink.output)")
            }
            #expect(ingest.output.contains("two uplinks run as vehicle robot-6 at once"), "\(ingest.output)")
        }
    }
}

import FleetCore
import FleetTestSupport
import FleetUplink
import Foundation
import GPSDLocation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The faults issue 36 names, each against a real Mosquitto and a real PostgreSQL with PostGIS, with `fleet-uplink`
/// and `fleet-ingest` as processes: whatever fails, every fix the uplink's queue accepted is stored exactly once.
@Suite(.serialized, .enabled(if: Mosquitto.isAvailable && PostgreSQL.isAvailable), .timeLimit(.minutes(10)))
struct FleetFaultTests {
    /// The broker SIGKILLed while fixes flow, and started again on the same port: the uplink keeps the fixes the
    /// broker did not acknowledge and sends them once it is back; the ingest resumes its session.
    ///
    /// What the broker acknowledged is the broker's to keep: this one saves its state at every change
    /// (`autosave_on_changes`), as the README says a broker that may be killed must. Mosquitto's default saves only
    /// when it shuts down: killed, it forgets the ingest's session, and the fixes the uplink sends before the ingest
    /// has subscribed again go to nobody (10 of 600 here, when tried).
    @Test func brokerKilledAndRestarted() async throws {
        try await FleetHarness.with(brokerSavesEveryChange: true) { fleet in
            try await fleet.startIngest()
            let uplink = try fleet.startUplink(vehicle: "robot-1", replay: try fleet.recording("drive.json", count: 600),
                                               speed: 25)
            try await fleet.waitForRows("robot-1", atLeast: 50)
            await fleet.broker.kill(SIGKILL)
            try await fleet.waitUntil("the uplink sees the broker gone") { uplink.output.contains("disconnected") }
            try await fleet.broker.restart()
            #expect(await uplink.waitForExit(timeout: .seconds(240)) == 0)
            try await fleet.waitForRows("robot-1", atLeast: 600)
            #expect(try await fleet.storedSeqs("robot-1") == Array(1...600))
            #expect(uplink.output.components(separatedBy: "connected to").count - 1 >= 2, "it connected again")
            #expect(try Self.retained(port: fleet.broker.port, topic: "fleet/robot-1/status") == "offline",
                    "stopped: offline, published before it disconnected")
        }
    }

    /// The uplink SIGKILLed while it drains a backlog, and started again on the same queue: the fixes in flight
    /// (and those acknowledged but not yet removed from the queue) are sent again, and the key stores them once.
    ///
    /// A kill shows that only if it leaves the queue holding a fix the ingest has stored. So the ingest is warmed up
    /// first (on another vehicle), and the uplink is killed as soon as a first fix of its 20,000 is stored, while
    /// it still drains; what the kill left is read from the queue's file, and the ingest must come to store its
    /// oldest fix (one the broker had acknowledged, which it delivers whatever became of the uplink). A kill that
    /// left none such is tried again, up to five times, on the same queue: the uplink had sent all it had read of
    /// its recording (1 kill in 8 beside two CPU-bound processes left an empty queue), or only fixes that the
    /// closing connection lost.
    @Test func uplinkKilledAndRestarted() async throws {
        try await FleetHarness.with { fleet in
            let ingest = try await fleet.startIngest()
            let warm = try fleet.startUplink(vehicle: "robot-0", replay: try fleet.recording("warm.json", count: 10))
            #expect(await warm.waitForExit(timeout: .seconds(240)) == 0)
            try await fleet.waitForRows("robot-0", atLeast: 10)
            var leftStoredAndQueued = false
            for attempt in 1...5 where !leftStoredAndQueued {
                let stored = try await fleet.storedCount("robot-2")
                let start = FleetRecording.defaultStart.addingTimeInterval(Double(attempt) * 100_000)
                let uplink = try fleet.startUplink(vehicle: "robot-2", replay: try fleet.recording(
                    "backlog-\(attempt).json", count: 20_000, start: start))
                try await fleet.waitForRows("robot-2", atLeast: stored + 1)
                await uplink.stop(SIGKILL)
                let left = try fleet.queueStatistics("robot-2")
                guard left.depth > 0 else { continue }
                // The queue holds the sequence numbers from this one to the last given (acknowledgements leave it in
                // order); the ingest stores a prefix of them, as the broker delivers them in order.
                let oldestQueued = Int(left.lastSeq) - left.depth + 1
                leftStoredAndQueued =
                    (try? await fleet.waitForRows("robot-2", atLeast: oldestQueued, timeout: .seconds(20))) != nil
            }
            try #require(leftStoredAndQueued, "a kill left a fix both stored and still queued, in 5 attempts")
            // Killed: its last will, offline, retained once the broker sees the connection gone.
            try await fleet.waitUntil("the last will") {
                try Self.retained(port: fleet.broker.port, topic: "fleet/robot-2/status") == "offline"
            }
            let stored = try await fleet.storedCount("robot-2")
            let later = FleetRecording.defaultStart.addingTimeInterval(400_000)
            let second = try fleet.startUplink(vehicle: "robot-2", replay: try fleet.recording("second.json", count: 10,
                                                                                              start: later))
            #expect(await second.waitForExit(timeout: .seconds(240)) == 0)
            let queue = try fleet.queueStatistics("robot-2")
            #expect(queue.depth == 0)
            let last = Int(queue.lastSeq)
            #expect(last >= stored + 10)
            try await fleet.waitForRows("robot-2", atLeast: last)
            #expect(try await fleet.storedSeqs("robot-2") == (1...last).map(Int64.init))
            await ingest.stop(SIGTERM)
            let duplicates = try #require(Self.number(before: " duplicates", in: ingest.output))
            #expect(duplicates > 0, "the fixes in flight at the kill were sent again")
        }
    }

    /// The ingest SIGKILLed while fixes flow, and started again: the broker kept its session (its subscription and
    /// every message it had not acknowledged), and sends them; nothing is lost, nothing stored twice.
    @Test func ingestKilledAndRestarted() async throws {
        try await FleetHarness.with { fleet in
            let ingest = try await fleet.startIngest()
            let uplink = try fleet.startUplink(vehicle: "robot-3", replay: try fleet.recording("drive.json", count: 5000))
            try await fleet.waitForRows("robot-3", atLeast: 500)
            await ingest.stop(SIGKILL)
            // The uplink hands the rest to the broker, which queues it for the absent ingest.
            #expect(await uplink.waitForExit(timeout: .seconds(240)) == 0)
            let stored = try await fleet.storedCount("robot-3")
            #expect(stored < 5000, "the ingest was killed before it had everything")
            try await fleet.startIngest()
            try await fleet.waitForRows("robot-3", atLeast: 5000)
            #expect(try await fleet.storedSeqs("robot-3") == (1...5000).map(Int64.init))
        }
    }

    /// A day of 1 Hz fixes (86,400) queued while the network was down, then the broker reachable: the newest fix goes
    /// first, retained, on the state topic, then the backlog in order on the fix topic, all of it stored.
    @Test func dayLongOutage() async throws {
        try await FleetHarness.with { fleet in
            let count = 86_400
            let vehicle = try VehicleID("robot-4")
            let identity: QueueID? = try {
                let queue = try FixQueue(directory: fleet.queueDirectory("robot-4"), vehicle: vehicle)
                let fixes = (0..<count).map { Self.fix(epoch: $0) }
                try queue.append(contentsOf: fixes)
                #expect(queue.statistics.depth == count)
                return queue.identity
            }()
            // What a subscriber sees, in order: both topics, every message.
            let seen = fleet.path("seen.txt")
            let subscriber = try ServerProcess(
                "/usr/bin/mosquitto_sub",
                ["-h", "127.0.0.1", "-p", String(fleet.broker.port), "-q", "1", "-v",
                 "-t", FleetTopic.state(vehicle), "-t", FleetTopic.fix(vehicle), "-t", "fleet/robot-4/probe"],
                output: seen)
            try await fleet.waitUntil("the subscriber is subscribed") {
                // A probe on one of its topics comes back once the subscription is in place.
                try? Self.publish(port: fleet.broker.port, topic: "fleet/robot-4/probe", payload: "probe")
                return subscriber.output.contains("probe")
            }
            try await fleet.startIngest()
            let uplink = try fleet.startUplink(vehicle: "robot-4", replay: try fleet.recording("none.json", count: 0))
            #expect(await uplink.waitForExit(timeout: .seconds(420)) == 0)
            try await fleet.waitForRows("robot-4", atLeast: count, timeout: .seconds(420))
            // The subscriber has everything once it has the last fix.
            let last = try FleetMessage(vehicle: vehicle, queue: identity, seq: Int64(count),
                                        location: Self.fix(epoch: count - 1)).payload()
            let lastLine = "fleet/robot-4/fix " + String(decoding: last, as: UTF8.self)
            try await fleet.waitUntil("the subscriber has the last fix") { subscriber.outputTail().hasSuffix(lastLine + "\n") }
            await subscriber.stop(SIGTERM)
            #expect(try await fleet.storedSeqs("robot-4") == (1...Int64(count)).map { $0 })

            let lines = subscriber.output.split(separator: "\n").filter { !$0.hasPrefix("fleet/robot-4/probe ") }
            let messages = lines.map { line -> (topic: Substring, seq: Int64?) in
                let space = line.firstIndex(of: " ") ?? line.endIndex
                let payload = line[space...].dropFirst()
                let seq = (try? FleetMessage(payload: Array(payload.utf8), topic: "fleet/robot-4/fix"))?.seq
                return (line[..<space], seq)
            }
            let first = try #require(messages.first)
            #expect(first.topic == "fleet/robot-4/state" && first.seq == Int64(count), "the newest fix first, on state")
            let fixes = messages.filter { $0.topic == "fleet/robot-4/fix" }.map(\.seq)
            #expect(fixes == (1...Int64(count)).map { $0 }, "then the backlog, in order, each once")
        }
    }

    /// The queue full while the broker is away: the oldest fixes are dropped and counted; the rest are all stored.
    @Test func queueFull() async throws {
        try await FleetHarness.with { fleet in
            await fleet.broker.kill(SIGKILL)
            let recording = try fleet.recording("drive.json", count: 250)
            let metricsFile = fleet.path("uplink.prom")
            let uplink = try fleet.startUplink(vehicle: "robot-5", replay: recording,
                                               ["--queue-limit", "100", "--metrics-file", metricsFile])
            try await fleet.waitUntil("the recording is queued") { uplink.output.contains("recording ended: 250 fixes") }
            await uplink.stop(SIGTERM)
            let queue = try fleet.queueStatistics("robot-5")
            #expect(queue.depth == 100)
            #expect(queue.dropped == 150)
            #expect(queue.lastSeq == 250)
            #expect(uplink.output.contains("dropped the oldest"))
            // Its health, as node_exporter's textfile collector would read it, written as it stopped.
            let metrics = try String(contentsOfFile: metricsFile, encoding: .utf8)
            #expect(metrics.contains(#"fleet_uplink_dropped_total{vehicle="robot-5"} 150"#), "\(metrics)")
            #expect(metrics.contains(#"fleet_uplink_queue_depth{vehicle="robot-5"} 100"#), "\(metrics)")
            #expect(metrics.contains(#"fleet_uplink_acknowledged_total{vehicle="robot-5"} 0"#), "\(metrics)")

            try await fleet.broker.restart()
            try await fleet.startIngest()
            let again = try fleet.startUplink(vehicle: "robot-5", replay: try fleet.recording("none.json", count: 0))
            #expect(await again.waitForExit(timeout: .seconds(240)) == 0)
            try await fleet.waitForRows("robot-5", atLeast: 100)
            #expect(try await fleet.storedSeqs("robot-5") == (151...250).map(Int64.init))
        }
    }

    /// A wrong password: refused, told in the status, retried with growing delays; the fixes wait in the queue and
    /// all go once the password is right.
    @Test func wrongPassword() async throws {
        try await FleetHarness.with(users: ["robot-6": "right horse battery", "ingest": "ingest secret"]) { fleet in
            let wrong = fleet.path("wrong"), right = fleet.path("right"), ingestPassword = fleet.path("ingest")
            try "staple\n".write(toFile: wrong, atomically: true, encoding: .utf8)
            try "right horse battery\n".write(toFile: right, atomically: true, encoding: .utf8)
            try "ingest secret\n".write(toFile: ingestPassword, atomically: true, encoding: .utf8)
            let url = "mqtt://robot-6@127.0.0.1:\(fleet.broker.port)"
            try await fleet.startIngest(["--password-file", ingestPassword],
                                  broker: "mqtt://ingest@127.0.0.1:\(fleet.broker.port)")
            let recording = try fleet.recording("drive.json", count: 20)
            let refused = try fleet.startUplink(vehicle: "robot-6", replay: recording, broker: url,
                                                ["--password-file", wrong])
            try await fleet.waitUntil("three refusals") {
                refused.output.components(separatedBy: "broker: refused").count - 1 >= 3
            }
            await refused.stop(SIGTERM)
            #expect(!refused.output.contains("staple"), "the password never shows")
            let delays = Self.retryDelays(in: refused.output)
            #expect(delays.count >= 3)
            #expect(delays.last! > delays.first!, "the delay grows: \(delays)")
            #expect(try await fleet.storedCount("robot-6") == 0)
            #expect(try fleet.queueStatistics("robot-6").depth == 20)

            let accepted = try fleet.startUplink(vehicle: "robot-6", replay: try fleet.recording("none.json", count: 0),
                                                 broker: url, ["--password-file", right])
            #expect(await accepted.waitForExit(timeout: .seconds(120)) == 0)
            try await fleet.waitForRows("robot-6", atLeast: 20)
            #expect(try await fleet.storedSeqs("robot-6") == (1...20).map(Int64.init))
        }
    }

    /// TLS with a CA file and a password, both ends: the fixes go through; a CA that did not sign the broker's
    /// certificate is refused and retried, never falling back to plain text.
    @Test func tlsWithPassword() async throws {
        try await FleetHarness.with(users: ["robot-9": "secret nine", "ingest": "ingest secret"], tls: true) { fleet in
            let tlsPort = try #require(fleet.broker.tlsPort)
            let caFile = try #require(fleet.caFile)
            let password = fleet.path("password"), ingestPassword = fleet.path("ingest")
            try "secret nine\n".write(toFile: password, atomically: true, encoding: .utf8)
            try "ingest secret\n".write(toFile: ingestPassword, atomically: true, encoding: .utf8)
            try await fleet.startIngest(["--password-file", ingestPassword, "--tls-ca", caFile],
                                        broker: "mqtts://ingest@127.0.0.1:\(tlsPort)")
            let recording = try fleet.recording("drive.json", count: 30)
            let strangers = try Mosquitto.makeCertificates(in: URL(fileURLWithPath: fleet.path("other-ca")))
            let distrustful = try fleet.startUplink(vehicle: "robot-9", replay: recording,
                                                    broker: "mqtts://robot-9@127.0.0.1:\(tlsPort)",
                                                    ["--password-file", password, "--tls-ca", strangers.caFile])
            try await fleet.waitUntil("two failed attempts") {
                distrustful.output.components(separatedBy: "broker: disconnected").count - 1 >= 2
            }
            await distrustful.stop(SIGTERM)
            #expect(try await fleet.storedCount("robot-9") == 0)
            #expect(!distrustful.output.contains("broker: online"))

            let trusting = try fleet.startUplink(vehicle: "robot-9", replay: try fleet.recording("none.json", count: 0),
                                                 broker: "mqtts://robot-9@127.0.0.1:\(tlsPort)",
                                                 ["--password-file", password, "--tls-ca", caFile])
            #expect(await trusting.waitForExit(timeout: .seconds(120)) == 0)
            try await fleet.waitForRows("robot-9", atLeast: 30)
            #expect(try await fleet.storedSeqs("robot-9") == (1...30).map(Int64.init))
        }
    }
}

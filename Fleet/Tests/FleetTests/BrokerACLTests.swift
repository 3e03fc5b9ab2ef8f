import FleetTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `Samples/Fleet/acl` in a real Mosquitto: each vehicle's login writes only under `fleet/<its name>/`, the ingest's
/// only reads `fleet/+/fix`. Mosquitto 2.0 acknowledges a denied QoS 1 publish like any other (PUBACK, reason 0) and
/// only logs `Denied PUBLISH`: the tests show both, since no publisher can tell a denied fix from a delivered one.
@Suite("Broker ACL", .enabled(if: Mosquitto.isAvailable), .timeLimit(.minutes(5)))
struct BrokerACLTests {
    static let passwords = ["robot-7": "seven secret", "robot-9": "nine secret", "ingest": "ingest secret"]

    @Test("robot-7's login on fleet/robot-9/fix and the ingest's on a fix topic are acknowledged, never delivered")
    func deniedPublishesAreAcknowledgedAndDropped() async throws {
        try await withBroker { broker, directory in
            // The ingest's persistent session: from its SUBACK on, the broker queues every fix the ACL lets it read.
            try await client(broker, directory, "mosquitto_sub", user: "ingest",
                             ["-i", "fleet-ingest", "-c", "-q", "1", "-t", "fleet/+/fix", "-E"])
            let impostor = try await client(broker, directory, "mosquitto_pub", user: "robot-7",
                                            ["-q", "1", "-t", "fleet/robot-9/fix", "-m", "robot-7 as robot-9", "-d"])
            let ingestWrites = try await client(broker, directory, "mosquitto_pub", user: "ingest",
                                                ["-q", "1", "-t", "fleet/robot-7/fix", "-m", "ingest as robot-7", "-d"])
            try await client(broker, directory, "mosquitto_pub", user: "robot-7",
                             ["-q", "1", "-t", "fleet/robot-7/fix", "-m", "robot-7 own"])
            // Both denied publishes acknowledged, as if delivered.
            #expect(impostor.contains("received PUBACK (Mid: 1, RC:0)"), "\(impostor)")
            #expect(ingestWrites.contains("received PUBACK (Mid: 1, RC:0)"), "\(ingestWrites)")

            // The session's queue is in publishing order: its first message is robot-7's own, so neither denied one
            // was queued before it.
            let first = try await client(broker, directory, "mosquitto_sub", user: "ingest",
                                         ["-i", "fleet-ingest", "-c", "-q", "1", "-t", "fleet/+/fix", "-v", "-C", "1"])
            #expect(first == "fleet/robot-7/fix robot-7 own\n")
            let denied = broker.log.split(separator: "\n").filter { $0.contains("Denied PUBLISH") }
            print(denied.joined(separator: "\n"))
            #expect(denied.count == 2)
            #expect(denied.contains { $0.contains("'fleet/robot-9/fix'") })
            #expect(denied.contains { $0.contains("'fleet/robot-7/fix'") })
        }
    }

    @Test("fleet-uplink logged in as robot-7 with --vehicle robot-9: every fix acknowledged, none stored",
          .enabled(if: PostgreSQL.isAvailable))
    func impostorUplinkIsAcknowledgedButNotStored() async throws {
        try await withBroker { broker, directory in
            let database = try await PostgreSQL.start()
            var programs: [ServerProcess] = []
            func stopAll() async {
                for program in programs { await program.stop(SIGKILL, grace: .seconds(1)) }
                await database.stop()
            }
            do {
                let path = { (name: String) in directory.appendingPathComponent(name).path }
                for (user, password) in Self.passwords {
                    try "\(password)\n".write(toFile: path("\(user).password"), atomically: true, encoding: .utf8)
                }
                try FleetRecording.write(count: 20, to: directory.appendingPathComponent("drive.json"))

                let prepare = try FleetProducts.ingest(["--prepare", "--database", database.url()],
                                                       output: path("prepare.log"))
                programs.append(prepare)
                try #require(await prepare.waitForExit(timeout: .seconds(120)) == 0, "\(prepare.output)")
                let ingest = try FleetProducts.ingest(
                    ["--broker", broker.url(user: "ingest"), "--password-file", path("ingest.password"),
                     "--database", database.url()], output: path("ingest.log"))
                programs.append(ingest)
                try await waitUntil("fleet-ingest has subscribed") {
                    guard ingest.isRunning else { throw ServerError("fleet-ingest ended: \(ingest.output)") }
                    return ingest.output.contains("subscribed to")
                }
                func uplink(vehicle: String) async throws -> String {
                    let program = try FleetProducts.uplink(
                        ["--vehicle", vehicle, "--broker", broker.url(user: "robot-7"),
                         "--password-file", path("robot-7.password"), "--replay", path("drive.json"), "--speed", "0",
                         "--queue", path("queue-\(vehicle)")], output: path("uplink-\(vehicle).log"))
                    programs.append(program)
                    let status = await program.waitForExit(timeout: .seconds(120))
                    try #require(status == 0, "fleet-uplink --vehicle \(vehicle): \(program.output)")
                    return program.output
                }

                // The uplink has no way to know: the broker acknowledged all 20, the queue is empty.
                let impostor = try await uplink(vehicle: "robot-9")
                #expect(impostor.contains("stopped: 20 fixes acknowledged, 0 kept in the queue"), "\(impostor)")
                let denied = broker.log.split(separator: "\n").filter { $0.contains("Denied PUBLISH") }
                #expect(denied.filter { $0.contains("'fleet/robot-9/fix'") }.count == 20, "\(denied)")
                // Its retained state and its status (`online`) denied too.
                #expect(denied.contains { $0.contains("'fleet/robot-9/state'") }, "\(denied)")
                #expect(denied.contains { $0.contains("'fleet/robot-9/status'") }, "\(denied)")

                // The same login as its own vehicle, after the impostor ended: all stored, and nothing of robot-9.
                let own = try await uplink(vehicle: "robot-7")
                #expect(own.contains("stopped: 20 fixes acknowledged, 0 kept in the queue"), "\(own)")
                try await waitUntil("robot-7's 20 fixes are stored") { try await count(database, "robot-7") == 20 }
                await ingest.stop(SIGTERM)
                #expect(try await count(database, "robot-9") == 0)
                let deniedOwn = broker.log.split(separator: "\n").filter {
                    $0.contains("Denied PUBLISH") && $0.contains("'fleet/robot-7/")
                }
                #expect(deniedOwn.isEmpty, "\(deniedOwn)")
                for output in [impostor, own] { print(output.split(separator: "\n").last.map(String.init) ?? "") }
            } catch {
                for program in programs { print("== \(program.commandLine)\n\(program.output)") }
                await stopAll()
                throw error
            }
            await stopAll()
        }
    }

    // MARK: Helpers

    /// Runs `body` with a broker that has the three users and `Samples/Fleet/acl`, logging every packet (so that its
    /// `Denied PUBLISH` lines show), and a scratch directory; both removed afterwards. Its queues are bounded by a
    /// number no fleet reaches, as `Samples/Fleet/mosquitto.conf` says, not by 0: with `max_queued_messages 0`,
    /// Mosquitto 2.0.11 closes the connection after each denied QoS 1 publish it acknowledged.
    private func withBroker(_ body: (Mosquitto, URL) async throws -> Void) async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let acl = try String(contentsOf: root.appendingPathComponent("Samples/Fleet/acl"), encoding: .utf8)
        let broker = try await Mosquitto.start(users: Self.passwords,
                                               extraConfiguration: ["log_type all", "max_queued_messages 100000000"],
                                               acl: acl)
        let directory = try makeServerDirectory("acl")
        do {
            try await body(broker, directory)
        } catch {
            print("== mosquitto\n\(broker.log)")
            await broker.stop()
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
        await broker.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Runs Mosquitto's client `tool` logged in as `user`, until it exits (status 0 expected); its output.
    @discardableResult
    private func client(_ broker: Mosquitto, _ directory: URL, _ tool: String, user: String,
                        _ arguments: [String]) async throws -> String {
        let process = try ServerProcess(
            "/usr/bin/\(tool)",
            ["-h", "127.0.0.1", "-p", String(broker.port), "-u", user, "-P", Self.passwords[user] ?? ""] + arguments,
            output: directory.appendingPathComponent("\(tool)-\(UUID().uuidString.prefix(8)).log").path)
        let status = await process.waitForExit(timeout: .seconds(60))
        if status == nil { await process.stop() }
        try #require(status == 0,
                     "\(tool) \(arguments.joined(separator: " ")): \(String(describing: status)) \(process.output)")
        return process.output
    }

    /// How many rows `vehicle` has in `fixes`.
    private func count(_ database: PostgreSQL, _ vehicle: String) async throws -> Int {
        Int(try await database.psql("SELECT count(*) FROM fixes WHERE vehicle = '\(vehicle)'")
            .trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    /// Waits until `condition` holds (a hang guard of two minutes, not a bound on speed).
    private func waitUntil(_ what: String, _ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(120)
        while try await !condition() {
            guard ContinuousClock.now < deadline else { throw ServerError("not within 2 minutes: \(what)") }
            try await Task.sleep(for: .milliseconds(50))
        }
    }
}

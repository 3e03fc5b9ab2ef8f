import FleetCore
import FleetTestSupport
import FleetUplink
import Foundation
import GPSDLocation
import Logging
import MetricsTestKit
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The uplink in this process against a real Mosquitto: order, acknowledgement, status, refusal, stop, metrics.
@Suite(.serialized, .enabled(if: Mosquitto.isAvailable), .timeLimit(.minutes(5)))
struct UplinkTests {
    /// A backlog goes newest first on the state topic, then in order on the fix topic, and leaves the queue only as
    /// the broker acknowledges it.
    @Test func backlogGoesNewestFirstThenInOrder() async throws {
        try await withBroker { broker, directory in
            let vehicle = try VehicleID("u-1")
            let queue = try FixQueue(directory: directory.appendingPathComponent("q").path, vehicle: vehicle)
            try queue.append(contentsOf: (0..<300).map(FleetFaultTests.fix(epoch:)))
            let seen = try await subscribe(broker, [FleetTopic.state(vehicle), FleetTopic.fix(vehicle)],
                                           output: directory.appendingPathComponent("seen").path)
            let metrics = TestMetrics()
            let uplink = try Uplink(configuration: configuration(vehicle, broker), queue: queue, metricsFactory: metrics)
            uplink.start()
            try await waitUntil { uplink.statistics.queue.depth == 0 && Self.lines(seen).count == 301 }
            await uplink.stop()
            await seen.stop(SIGTERM)

            let messages = Self.lines(seen).map { line in
                let space = line.firstIndex(of: " ")!
                return (topic: line[..<space], seq: try? FleetMessage(payload: Array(line[space...].dropFirst().utf8),
                                                                     topic: "fleet/u-1/fix").seq)
            }
            #expect(messages.first?.topic == "fleet/u-1/state" && messages.first?.seq == 300)
            #expect(messages.dropFirst().map(\.seq) == (1...300).map { Optional($0) })
            #expect(uplink.statistics.acknowledged == 300)
            #expect(try metrics.expectCounter("fleet_uplink_acknowledged_total", [("vehicle", "u-1")]).totalValue == 300)
            #expect(try metrics.expectGauge("fleet_uplink_queue_depth", [("vehicle", "u-1")]).lastValue == 0)
        }
    }

    /// Fixes given while connected go out as they come; the state topic keeps the newest, retained.
    @Test func liveFixesGoOutAndTheNewestIsRetained() async throws {
        try await withBroker { broker, directory in
            let vehicle = try VehicleID("u-2")
            let queue = try FixQueue(directory: directory.appendingPathComponent("q").path, vehicle: vehicle)
            let uplink = try Uplink(configuration: configuration(vehicle, broker), queue: queue,
                                    metricsFactory: TestMetrics())
            uplink.start()
            for await state in uplink.statusChanges() where state == .online { break }
            for epoch in 0..<50 { uplink.enqueue(FleetFaultTests.fix(epoch: epoch)) }
            try await waitUntil { uplink.statistics.acknowledged == 50 && uplink.statistics.queue.depth == 0 }
            await uplink.stop()
            #expect(uplink.statistics.queue.lastSeq == 50)
            let state = try FleetFaultTests.retained(port: broker.port, topic: FleetTopic.state(vehicle))
            #expect(try FleetMessage(payload: Array(state.utf8), topic: "fleet/u-2/fix").seq == 50)
            #expect(try FleetFaultTests.retained(port: broker.port, topic: FleetTopic.status(vehicle)) == "offline")
        }
    }

    /// A wrong password: refused, told with the broker's reason, counted, retried with growing delays; nothing leaves
    /// the queue.
    @Test func refusedIsToldAndRetried() async throws {
        try await withBroker(users: ["u-3": "right"]) { broker, directory in
            let vehicle = try VehicleID("u-3")
            let queue = try FixQueue(directory: directory.appendingPathComponent("q").path, vehicle: vehicle)
            try queue.append(FleetFaultTests.fix(epoch: 0))
            var settings = configuration(vehicle, broker)
            settings.broker.address.username = "u-3"
            settings.broker.address.password = "wrong"
            settings.broker.reconnectPolicy = ReconnectPolicy(initialDelay: .milliseconds(50), maximumDelay: .seconds(1), jitter: 0)
            let uplink = try Uplink(configuration: settings, queue: queue, metricsFactory: TestMetrics())
            var states: [UplinkState] = []
            uplink.start()
            for await state in uplink.statusChanges() {
                states.append(state)
                if states.filter({ if case .refused = $0 { true } else { false } }).count == 3 { break }
            }
            await uplink.stop()
            let refusals = states.compactMap { state -> String? in if case .refused(let reason) = state { reason } else { nil } }
            #expect(refusals.count == 3)
            #expect(refusals.allSatisfy { $0.lowercased().contains("not auth") || $0.lowercased().contains("password") },
                    "\(refusals)")
            let delays = states.compactMap { state -> Duration? in if case .waiting(let delay) = state { delay } else { nil } }
            #expect(delays.count >= 2 && delays[1] > delays[0], "\(delays)")
            #expect(uplink.statistics.refusals >= 3)
            #expect(uplink.statistics.queue.depth == 1)
            #expect(uplink.state == .stopped)
        }
    }

    /// The queue's cap drops the oldest, counted in the statistics and the metrics.
    @Test func dropsAreCounted() async throws {
        try await withBroker { broker, directory in
            let vehicle = try VehicleID("u-4")
            let queue = try FixQueue(directory: directory.appendingPathComponent("q").path, vehicle: vehicle, capacity: 10)
            let metrics = TestMetrics()
            var settings = configuration(vehicle, broker)
            settings.broker.address.port = freeLoopbackPort()   // nobody there: everything waits in the queue
            let uplink = try Uplink(configuration: settings, queue: queue, metricsFactory: metrics)
            uplink.start()
            for epoch in 0..<25 { uplink.enqueue(FleetFaultTests.fix(epoch: epoch)) }
            await uplink.flushQueue()
            await uplink.stop()
            #expect(uplink.statistics.queue.depth == 10)
            #expect(uplink.statistics.queue.dropped == 15)
            #expect(try metrics.expectCounter("fleet_uplink_dropped_total", [("vehicle", "u-4")]).totalValue == 15)
            #expect(try queue.batch(after: 0, limit: 100).map(\.seq) == Array(16...25))
        }
    }

    /// The largest window the command line allows (65535) still connects: libmosquitto's own limit is 65535
    /// messages in flight, the window's fixes and the state and status messages share it.
    @Test func largestWindowConnects() async throws {
        try await withBroker { broker, directory in
            let vehicle = try VehicleID("u-5")
            let queue = try FixQueue(directory: directory.appendingPathComponent("q").path, vehicle: vehicle)
            try queue.append(contentsOf: (0..<10).map(FleetFaultTests.fix(epoch:)))
            var settings = configuration(vehicle, broker)
            settings.maximumInFlight = 65_535
            let uplink = try Uplink(configuration: settings, queue: queue, metricsFactory: TestMetrics())
            uplink.start()
            try await waitUntil { uplink.statistics.queue.depth == 0 }
            await uplink.stop()
            #expect(uplink.statistics.connections == 1)
            #expect(uplink.statistics.acknowledged == 10)
        }
    }

    /// stop() returns while connect() blocks: a listener whose accept queue is full drops the SYNs, so the TCP
    /// handshake would only fail after the kernel's retries (about 2 minutes, beyond this test's limit).
    @Test(.timeLimit(.minutes(1))) func stopWhileConnectBlocks() async throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #expect(listener >= 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) }
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        #expect(listen(listener, 0) == 0)
        var fillers: [Int32] = []
        defer { fillers.forEach { close($0) } }
        for _ in 0..<3 {   // never accepted: the queue is full, later SYNs are dropped
            let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            _ = fcntl(filler, F_SETFL, fcntl(filler, F_GETFL) | O_NONBLOCK)
            _ = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(filler, $0, length) }
            }
            fillers.append(filler)
        }
        let directory = try makeServerDirectory("uplink")
        defer { try? FileManager.default.removeItem(at: directory) }
        let vehicle = try VehicleID("u-6")
        let queue = try FixQueue(directory: directory.appendingPathComponent("q").path, vehicle: vehicle)
        try queue.append(FleetFaultTests.fix(epoch: 0))
        let settings = UplinkConfiguration(vehicle: vehicle,
                                           broker: BrokerAddress(host: "127.0.0.1", port: UInt16(bigEndian: address.sin_port)))
        let uplink = try Uplink(configuration: settings, queue: queue, metricsFactory: TestMetrics())
        uplink.start()
        for await state in uplink.statusChanges() where state == .connecting(attempt: 1) { break }
        await uplink.stop()
        #expect(uplink.state == .stopped)
        #expect(uplink.statistics.queue.depth == 1)
    }

    /// A TLS broker whose port refuses: told at once as a refused connection, not after the keepalive as a
    /// keepalive timeout (the handshake, started before the TCP connect was made, used to hide the refusal).
    @Test(.timeLimit(.minutes(1))) func aRefusedTLSConnectIsToldAsSuch() async throws {
        let directory = try makeServerDirectory("uplink")
        defer { try? FileManager.default.removeItem(at: directory) }
        let vehicle = try VehicleID("u-7")
        let queue = try FixQueue(directory: directory.appendingPathComponent("q").path, vehicle: vehicle)
        var settings = UplinkConfiguration(vehicle: vehicle, broker: try BrokerAddress(
            parsing: "mqtts://127.0.0.1:\(freeLoopbackPort())"))
        settings.broker.keepAlive = .seconds(60)
        let uplink = try Uplink(configuration: settings, queue: queue, metricsFactory: TestMetrics())
        uplink.start()
        var reason = ""
        for await state in uplink.statusChanges() {
            if case .disconnected(let why) = state {
                reason = why
                break
            }
        }
        await uplink.stop()
        #expect(reason.contains("refused"), "\(reason)")
    }

    /// start(), enqueue() and stop() from tasks at once, many times: every stop returns with the uplink stopped
    /// (its state stream ended), every thread joined, and every fix taken is in the queue.
    @Test(.timeLimit(.minutes(2))) func startEnqueueAndStopRacingEndStoppedEveryTime() async throws {
        let directory = try makeServerDirectory("uplink")
        defer { try? FileManager.default.removeItem(at: directory) }
        let vehicle = try VehicleID("u-8")
        var settings = UplinkConfiguration(vehicle: vehicle, broker: BrokerAddress(host: "127.0.0.1",
                                                                                   port: freeLoopbackPort()))
        settings.broker.reconnectPolicy = ReconnectPolicy(initialDelay: .milliseconds(1), maximumDelay: .milliseconds(5))
        for round in 0..<100 {
            let queue = try FixQueue(directory: directory.appendingPathComponent("q\(round)").path, vehicle: vehicle)
            let uplink = try Uplink(configuration: settings, queue: queue, metricsFactory: TestMetrics())
            await withTaskGroup(of: Void.self) { group in
                group.addTask { uplink.start() }
                group.addTask { uplink.enqueue(FleetFaultTests.fix(epoch: round)) }
                group.addTask { await uplink.stop() }
                group.addTask { await uplink.drained() }
            }
            await uplink.stop()
            #expect(uplink.state == .stopped, "round \(round)")
            for await _ in uplink.statusChanges() {}   // ended: it returns
            await uplink.drained()
            #expect(uplink.statistics.queue.depth <= 1)
            try queue.close()
        }
    }

    /// Fixes given without a start are written by the writer, which stop() joins: nothing is lost, nothing waits.
    @Test func fixesGivenWithoutAStartAreQueuedAndStopReturns() async throws {
        let directory = try makeServerDirectory("uplink")
        defer { try? FileManager.default.removeItem(at: directory) }
        let vehicle = try VehicleID("u-9")
        let queue = try FixQueue(directory: directory.appendingPathComponent("q").path, vehicle: vehicle)
        let uplink = try Uplink(configuration: UplinkConfiguration(vehicle: vehicle, broker: BrokerAddress(
            host: "127.0.0.1", port: freeLoopbackPort())), queue: queue, metricsFactory: TestMetrics())
        for epoch in 0..<5 { uplink.enqueue(FleetFaultTests.fix(epoch: epoch)) }
        await uplink.stop()
        await uplink.drained()
        #expect(queue.statistics.depth == 5)
        uplink.enqueue(FleetFaultTests.fix(epoch: 5))
        await uplink.flushQueue()
        #expect(queue.statistics.depth == 5, "after the stop nothing is taken")
    }

    // MARK: Helpers

    func configuration(_ vehicle: VehicleID, _ broker: Mosquitto) -> UplinkConfiguration {
        UplinkConfiguration(vehicle: vehicle, broker: BrokerAddress(host: "127.0.0.1", port: broker.port))
    }

    func withBroker(users: [String: String] = [:], _ body: (Mosquitto, URL) async throws -> Void) async throws {
        let broker = try await Mosquitto.start(users: users)
        let directory = try makeServerDirectory("uplink")
        do {
            try await body(broker, directory)
        } catch {
            print(broker.log)
            await broker.stop()
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
        await broker.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// mosquitto_sub on `topics` (and a probe topic), subscribed before it returns: a probe has come back.
    func subscribe(_ broker: Mosquitto, _ topics: [String], output: String) async throws -> ServerProcess {
        let subscriber = try ServerProcess(
            "/usr/bin/mosquitto_sub", ["-h", "127.0.0.1", "-p", String(broker.port), "-q", "1", "-v", "-t", "probe"]
                + topics.flatMap { ["-t", $0] }, output: output)
        try await waitUntil {
            try? FleetFaultTests.publish(port: broker.port, topic: "probe", payload: "probe")
            return subscriber.output.contains("probe probe")
        }
        return subscriber
    }

    /// What a subscriber received, without the probes: one line per message, `topic payload`.
    static func lines(_ subscriber: ServerProcess) -> [Substring] {
        subscriber.output.split(separator: "\n").filter { !$0.hasPrefix("probe ") }
    }

    func waitUntil(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(120)
        while !condition() {
            guard ContinuousClock.now < deadline else { throw ServerError("condition not met within 120 s") }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}

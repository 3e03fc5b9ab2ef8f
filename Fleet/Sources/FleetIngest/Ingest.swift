import FleetCore
public import Logging
public import CoreMetrics
import GPSDLocation
import GPSDSystem

/// The server's end of the fleet: it subscribes to every vehicle's fixes (`fleet/+/fix`) at QoS 1 with a persistent
/// session and writes them to PostgreSQL with PostGIS (``FixStore``), acknowledging each message only once its row
/// is committed: a message the ingest had not written when it, the broker or the database went away is sent again
/// by the broker, and the table's key (vehicle, queue, seq) stores it once. Fixes of one vehicle from two
/// queues at once (two uplinks run as one vehicle) are stored, counted (`fleet_ingest_concurrent_queues_total`) and
/// logged as an error.
///
/// A message that is not a fix of its topic's vehicle with values that can be true (``FleetMessage/init(payload:topic:)``)
/// is refused, counted by reason (`fleet_ingest_rejected_total{reason=…}`), logged once per reason, and acknowledged
/// so that the broker does not send it again; nothing else is lost with it. So is a PUBLISH the subscriber does not
/// read (``MQTTRefusal``): one too large to read is skipped unread and counted as `too_large`, as a payload over
/// ``FleetMessage/maximumPayloadSize`` is; one malformed as `malformed_publish`.
///
/// ```swift
/// let store = try FixStore(url: "postgresql://fleet@127.0.0.1/fleet", logger: logger)
/// let ingest = Ingest(configuration: IngestConfiguration(broker: try BrokerAddress(parsing: "mqtt://127.0.0.1")),
///                     store: store, logger: logger)
/// try await withThrowingDiscardingTaskGroup { group in
///     group.addTask { await store.run() }
///     group.addTask { try await ingest.run() }
/// }
/// ```
public final class Ingest: Sendable {
    public let configuration: IngestConfiguration
    public let store: FixStore
    let logger: Logger
    private let shared = Locked(Shared())
    private let metrics: IngestMetrics

    private struct Shared {
        var statistics = IngestStatistics()
        var reasonsLogged: Set<String> = []
        var queues = VehicleQueues()
        /// When the database outage being told began (told once, across batches, until the database takes one).
        var outageSince: ContinuousClock.Instant?
    }

    public init(configuration: IngestConfiguration, store: FixStore, logger: Logger = Logger(label: "fleet-ingest"),
                metricsFactory: (any MetricsFactory)? = nil) {
        self.configuration = configuration
        self.store = store
        self.logger = logger
        self.metrics = IngestMetrics(factory: metricsFactory ?? MetricsSystem.factory)
    }

    /// A database outage began at `instant`: whether it is news (none was told before it ended).
    func outageBegan(at instant: ContinuousClock.Instant) -> Bool {
        shared.withLock { state in
            guard state.outageSince == nil else { return false }
            state.outageSince = instant
            state.statistics.databaseOutages += 1
            return true
        }
    }

    /// The database took a batch: when the outage told began, if one was.
    func outageEnded() -> ContinuousClock.Instant? {
        shared.withLock { state in
            defer { state.outageSince = nil }
            return state.outageSince
        }
    }

    /// What it has done so far.
    public var statistics: IngestStatistics { shared.withLock { $0.statistics } }

    /// Checks the database (``FixStore/check()``: prepared by an owner, this role granted INSERT and SELECT), then
    /// receives and stores fixes until the task is cancelled, reconnecting to the broker for ever and retrying the
    /// database with backoff. A database not ready is told once and checked again until it is (an owner may run
    /// `fleet-ingest --prepare` meanwhile). The store's ``FixStore/run()`` must be running.
    public func run() async throws {
        var failures = 0
        var told: String?
        while true {
            do {
                try await store.check()
                if told != nil { logger.notice("the database is ready") }
                break
            } catch {
                try Task.checkCancellation()
                failures += 1
                let reason = String(reflecting: error)
                if told != reason { logger.error("database not ready (checked again until it is): \(reason)") }
                told = reason
                try await Task.sleep(for: delay(afterFailures: failures))
            }
        }
        failures = 0
        let clock = ContinuousClock()
        while true {
            try Task.checkCancellation()
            let start = clock.now
            var provenGood = false
            do {
                try await session { provenGood = true }
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                try Task.checkCancellation()
                logger.warning("broker \(configuration.broker.address): \(error)")
            }
            // A SUBACK proves nothing: a broker may drop every connection right after it (a message it cannot
            // deliver, another client with the same id).
            if provenGood || clock.now - start >= configuration.provenAfter { failures = 0 }
            failures += 1
            try await Task.sleep(for: delay(afterFailures: failures))
        }
    }

    func delay(afterFailures failures: Int) -> Duration {
        configuration.broker.reconnectPolicy.delay(afterFailures: failures, unit: Double.random(in: 0..<1))
    }

    /// One connection to the broker, until it ends; `provenGood` is called when a fix it brought is committed.
    private func session(provenGood: () -> Void) async throws {
        let subscriber = try await MQTTSubscriber.connect(
            host: configuration.broker.address.host, port: configuration.broker.address.port,
            clientID: configuration.clientID, cleanSession: false, username: configuration.broker.address.username,
            password: configuration.broker.address.password, caFile: configuration.broker.tlsCAFile,
            keepAlive: UInt16(clamping: configuration.broker.keepAlive.components.seconds),
            maximumBatchSize: configuration.batchSize)
        do {
            // A session the broker kept has the subscription, and may hold a backlog that comes at once, ahead of a
            // SUBACK: subscribing again would wait for a SUBACK behind messages nobody reads yet.
            if !subscriber.sessionPresent {
                let granted = try await subscriber.subscribe(configuration.topicFilter, qos: 1)
                guard granted == 1 else {
                    throw IngestError.subscriptionRefused("\(configuration.topicFilter) granted QoS \(granted), not 1")
                }
            }
            shared.withLock { $0.statistics.connections += 1 }
            let kept = subscriber.sessionPresent ? " (the broker's session kept)" : ""
            logger.info("subscribed to \(configuration.topicFilter) on \(configuration.broker.address)\(kept)")
            try await subscriber.receive { inbound in
                for try await batch in inbound.batches {
                    if try await ingest(batch, from: inbound) > 0 { provenGood() }
                }
            }
            throw IngestError.connectionEnded
        } catch {
            await subscriber.disconnect()
            throw error
        }
    }

    /// Validates, stores and then acknowledges one batch. The database is retried until it takes the batch: the
    /// messages stay unacknowledged meanwhile, and the connection reads no more than a batch ahead.
    /// - Returns: How many fixes were committed (stored, or found already stored).
    private func ingest(_ batch: [MQTTMessage], from inbound: MQTTInbound) async throws -> Int {
        var fixes: [FleetMessage] = []
        fixes.reserveCapacity(batch.count)
        var refused: [Refusal] = []
        for message in batch {
            if let refusal = message.refusal {
                refused.append(Refusal(refusal, topic: message.topic))
                continue
            }
            do {
                fixes.append(try FleetMessage(payload: message.payload, topic: message.topic))
            } catch {
                refused.append(Refusal(error))
            }
        }
        let written = fixes.isEmpty ? 0 : try await storeRetrying(fixes)
        await inbound.acknowledge(batch.compactMap(\.packetID))
        let now = ContinuousClock.now
        // Only batches of new fixes tell which queues are sending: a redelivery (after a lost acknowledgement) brings
        // old fixes again, which would look like two queues taking turns.
        let fresh = written == fixes.count ? fixes : []
        let (firstOfReason, notices) = shared.withLock { state -> ([Refusal], [VehicleQueues.Notice]) in
            let notices = fresh.compactMap { state.queues.saw($0.vehicle, queue: $0.queue?.rawValue ?? "", now: now) }
            for case .twoUplinks in notices { state.statistics.concurrentQueues += 1 }
            state.statistics.received += Int64(batch.count)
            state.statistics.stored += Int64(written)
            state.statistics.duplicates += Int64(fixes.count - written)
            var first: [Refusal] = []
            for rejection in refused {
                state.statistics.rejected[rejection.reason, default: 0] += 1
                if state.reasonsLogged.insert(rejection.reason).inserted { first.append(rejection) }
            }
            return (first, notices)
        }
        metrics.received.increment(by: batch.count)
        metrics.stored.increment(by: written)
        metrics.duplicates.increment(by: fixes.count - written)
        for rejection in refused { metrics.rejected(rejection.reason).increment() }
        for rejection in firstOfReason {
            logger.warning("refused a message: \(rejection) (counted as \(rejection.reason); logged once)")
        }
        for notice in notices { tell(notice) }
        return fixes.count
    }

    private func tell(_ notice: VehicleQueues.Notice) {
        switch notice {
        case .twoUplinks(let vehicle, let queues):
            metrics.concurrentQueues.increment()
            logger.error("""
                two uplinks run as vehicle \(vehicle) at once (queues \(queues.joined(separator: " and "))): \
                both are stored, each under its queue; give each its own --vehicle
                """)
        case .newQueue(let vehicle, let queue, let previous):
            logger.notice("""
                vehicle \(vehicle) sends from a new queue \(queue) (before: \(previous.isEmpty ? "none" : previous)): \
                its numbers start again, stored beside the old ones
                """)
        }
    }
}

/// A message refused: its payload (``FleetRejection``) or its packet (``MQTTRefusal``). Counted under `reason`.
private struct Refusal: CustomStringConvertible {
    let reason: String
    let description: String

    init(_ rejection: FleetRejection) {
        reason = rejection.reason
        description = rejection.description
    }

    init(_ refusal: MQTTRefusal, topic: String) {
        switch refusal {
        case .tooLarge: reason = FleetRejection.tooLarge.reason
        case .malformed: reason = "malformed_publish"
        }
        description = "\(refusal) on \(topic.isEmpty ? "a topic that cannot be read" : topic)"
    }
}

/// Why the ingest's connection ended.
public enum IngestError: Error, Sendable, CustomStringConvertible {
    case subscriptionRefused(String)
    case connectionEnded

    public var description: String {
        switch self {
        case .subscriptionRefused(let reason): "subscription refused: \(reason)"
        case .connectionEnded: "the broker closed the connection"
        }
    }
}

private struct IngestMetrics: Sendable {
    let received: Counter
    let stored: Counter
    let duplicates: Counter
    let concurrentQueues: Counter
    let factory: any MetricsFactory

    init(factory: any MetricsFactory) {
        self.factory = factory
        received = Counter(label: "fleet_ingest_received_total", factory: factory)
        stored = Counter(label: "fleet_ingest_stored_total", factory: factory)
        duplicates = Counter(label: "fleet_ingest_duplicates_total", factory: factory)
        concurrentQueues = Counter(label: "fleet_ingest_concurrent_queues_total", factory: factory)
    }

    func rejected(_ reason: String) -> Counter {
        Counter(label: "fleet_ingest_rejected_total", dimensions: [("reason", reason)], factory: factory)
    }
}

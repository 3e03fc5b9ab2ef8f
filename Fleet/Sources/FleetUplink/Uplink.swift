import FleetCore
public import GPSDLocation
public import Logging
public import CoreMetrics
import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A vehicle's end of the fleet: every fix handed to it is kept in its on-disk ``FixQueue`` and published over MQTT
/// 3.1.1 at QoS 1 until the broker acknowledges it; only then does it leave the queue.
///
/// - Each fix goes once, in order, to `fleet/<vehicle>/fix`, its payload carrying the vehicle and the fix's sequence
///   number: the dedupe key, so that a fix sent again (after a lost acknowledgement, a restart) is stored once.
/// - The newest fix goes first, retained, to `fleet/<vehicle>/state`: at each connection before the backlog, and again
///   as each new fix comes, so a map shows where the vehicle is while a day's backlog drains behind it.
/// - At most ``UplinkConfiguration/maximumInFlight`` fixes are unacknowledged at a time; the backlog is read from the
///   queue in batches.
/// - `fleet/<vehicle>/status` is `online` while connected and `offline` otherwise (the connection's last will, so also
///   when the uplink dies), both retained.
/// - It reconnects for ever, with capped backoff and jitter (``UplinkConfiguration/reconnectPolicy``), after a failed,
///   refused (a wrong password) or lost connection; each is told in ``statusChanges()`` and logged.
///
/// The network runs on a thread of its own (libmosquitto, driven by `poll(2)`); the queue's writes on a queue of their
/// own, so a connection that hangs never holds a fix back from the disk.
///
/// ```swift
/// let uplink = Uplink(configuration: configuration, queue: try FixQueue(directory: "/var/lib/fleet", vehicle: id))
/// uplink.start()
/// for try await fix in gps.updates(delivery: .oncePerEpoch) { uplink.enqueue(fix) }
/// await uplink.stop()
/// ```
///
/// Its health goes through swift-metrics (to the factory the program bootstrapped, or `metricsFactory`), each with a
/// `vehicle` dimension: `fleet_uplink_queue_depth`, `fleet_uplink_oldest_age_seconds`,
/// `fleet_uplink_acknowledged_total`, `fleet_uplink_dropped_total`, `fleet_uplink_connections_total`,
/// `fleet_uplink_refusals_total`, `fleet_uplink_online` (0 or 1) and the timer `fleet_uplink_fix_latency` (from a
/// fix's arrival from gpsd to the broker's acknowledgement, for fixes sent as they come).
public final class Uplink: Sendable {
    /// How it connects and paces.
    public let configuration: UplinkConfiguration
    /// Its queue.
    public let queue: FixQueue

    private let logger: Logger
    private let wake: WakePipe
    private let shared = Mutex(Shared())
    private let appends = DispatchQueue(label: "fleet-uplink.queue")
    private let metrics: UplinkMetrics
    private let finished = DispatchSemaphore(value: 0)
    private let fixTopic: String
    private let stateTopic: String
    private let statusTopic: String

    private struct Shared {
        var state = UplinkState.connecting(attempt: 1)
        var isStarted = false
        var isStopping = false
        /// The uplink's thread is inside `mosquitto_connect`, which blocks until the TCP handshake ends (up to the
        /// kernel's SYN retries, about 2 minutes, for a host that drops them) and no wake interrupts.
        var isInConnect = false
        var observers: [Int: AsyncStream<UplinkState>.Continuation] = [:]
        var nextObserver = 0
        var acknowledged: Int64 = 0
        var connections = 0
        var refusals = 0
        var inFlight = 0
        /// Fixes given and not yet written, and whether a write of them is scheduled.
        var pending: [Location] = []
        var isAppendScheduled = false
        /// The newest fix given, for the state topic.
        var newest: QueuedFix?
        /// When fixes sent as they came arrived from gpsd, by sequence number, until acknowledged.
        var arrivals: [Int64: ContinuousClock.Instant] = [:]
        /// The queue's drops already counted in the metrics.
        var droppedCounted: Int64 = 0
    }

    /// Fixes in flight at most: the configuration's, within what libmosquitto's message ids (1 to 65535, one
    /// counter per connection) can tell apart together with the state, `online` and `offline` messages. Beyond it
    /// `setMaxInflight` refused every connection, and ids would repeat among unacknowledged messages.
    private var window: Int { min(configuration.maximumInFlight, 65_532) }


    /// Arrival times kept for latency, at most: a longer backlog's fixes are not timed.
    private static let maximumTimed = 4096

    /// An uplink for `queue`'s vehicle; ``start()`` starts it.
    public init(configuration: UplinkConfiguration, queue: FixQueue, logger: Logger = Logger(label: "fleet-uplink"),
                metricsFactory: (any MetricsFactory)? = nil) throws(UplinkError) {
        self.configuration = configuration
        self.queue = queue
        self.logger = logger
        self.wake = try WakePipe()
        self.metrics = UplinkMetrics(vehicle: configuration.vehicle, factory: metricsFactory ?? MetricsSystem.factory)
        fixTopic = FleetTopic.fix(configuration.vehicle)
        stateTopic = FleetTopic.state(configuration.vehicle)
        statusTopic = FleetTopic.status(configuration.vehicle)
        shared.withLock { $0.droppedCounted = queue.statistics.dropped }
        metrics.update(queue.statistics, now: Date())
    }

    /// Starts connecting and publishing, on a thread of its own. Once only; later calls do nothing.
    public func start() {
        let first = shared.withLock { state in
            defer { state.isStarted = true }
            return !state.isStarted
        }
        guard first else { return }
        let thread = Thread { [self] in
            run()
            finished.signal()
        }
        thread.name = "fleet-uplink"
        thread.start()
    }

    /// Keeps `location` in the queue (on the queue's own thread; this returns at once) and publishes it.
    ///
    /// Fixes that come while the queue is writing are written together, in one transaction, after it: a burst (a
    /// replay, a receiver at 20 Hz) costs one commit per write, not one per fix. A fix that cannot be sent (no calendar
    /// time, a non-finite position: none from gpsd is such) is logged and left.
    public func enqueue(_ location: Location) {
        let schedule = shared.withLock { state in
            state.pending.append(location)
            defer { state.isAppendScheduled = true }
            return !state.isAppendScheduled
        }
        if schedule { appends.async { [self] in appendPending() } }
    }

    /// Writes the fixes given since the last write, in one transaction.
    private func appendPending() {
        let fixes = shared.withLock { state in
            defer {
                state.pending.removeAll(keepingCapacity: true)
                state.isAppendScheduled = false
            }
            return state.pending
        }
        let sendable = fixes.filter { fix in
            let isSendable = fix.coordinate.latitude.isFinite && fix.coordinate.longitude.isFinite
                && GPSDTime.string(from: fix.timestamp) != nil
            if !isSendable { logger.error("fix not queued: it has no calendar time or a non-finite position: \(fix)") }
            return isSendable
        }
        guard !sendable.isEmpty else { return }
        let messages: [FleetMessage], newestPayload: [UInt8]
        do {
            messages = try queue.append(contentsOf: sendable)
            guard let newest = messages.last else { return }
            newestPayload = try newest.payload()
        } catch {
            logger.error("\(sendable.count) fixes not queued: \(error)")
            return
        }
        let statistics = queue.statistics
        let newDrops = shared.withLock { state in
            state.newest = QueuedFix(seq: messages[messages.count - 1].seq, payload: newestPayload)
            // Only fixes sent soon are timed: during an outage the times are let go (a backlog is not live).
            if state.arrivals.count + messages.count > Self.maximumTimed { state.arrivals.removeAll() }
            for (message, fix) in zip(messages, sendable) {
                if let instant = fix.arrival?.instant { state.arrivals[message.seq] = instant }
            }
            defer { state.droppedCounted = statistics.dropped }
            return statistics.dropped - state.droppedCounted
        }
        if newDrops > 0 {
            metrics.dropped.increment(by: newDrops)
            logger.warning("queue full (\(queue.capacity) fixes): dropped the oldest \(newDrops)")
        }
        metrics.update(statistics, now: Date())
        wake.wake()
    }

    /// Waits until every fix given to ``enqueue(_:)`` so far is in the queue.
    public func flushQueue() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            appends.async { continuation.resume() }
        }
    }

    /// Stops: the fixes given so far are queued, `offline` is published on the status topic when connected (waiting
    /// up to 2 s for the broker to take it), and the connection is closed. What is not acknowledged stays in the queue
    /// for the next start.
    public func stop() async {
        await flushQueue()
        let started = shared.withLock { state in
            state.isStopping = true
            return state.isStarted
        }
        wake.wake()
        guard started else {
            setState(.stopped)
            return
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async { [self] in
                // A thread blocked in connect() is let go: it has sent nothing and holds no acknowledgement, so there
                // is nothing to close; it finds isStopping when connect() returns and ends without using the queue.
                while finished.wait(timeout: .now() + .milliseconds(50)) == .timedOut {
                    if shared.withLock({ $0.isInConnect }) {
                        setState(.stopped)
                        continuation.resume()
                        return
                    }
                }
                finished.signal()   // a second stop() also returns
                continuation.resume()
            }
        }
    }

    /// The state now.
    public var state: UplinkState { shared.withLock { $0.state } }

    /// The state now, then each change, until ``stop()``.
    public func statusChanges() -> AsyncStream<UplinkState> {
        let (stream, continuation) = AsyncStream.makeStream(of: UplinkState.self, bufferingPolicy: .bufferingNewest(64))
        let current: UplinkState? = shared.withLock { state in
            if case .stopped = state.state, state.isStopping { return nil }
            let id = state.nextObserver
            state.nextObserver += 1
            state.observers[id] = continuation
            continuation.onTermination = { [weak self] _ in self?.shared.withLock { _ = $0.observers.removeValue(forKey: id) } }
            // Under the lock, so that a change made meanwhile on the uplink's thread (yielded after its own
            // unlock) cannot reach this new stream before the older state it replaced. Nobody iterates the stream
            // yet: the yield only buffers, and runs none of the caller's code.
            continuation.yield(state.state)
            return state.state
        }
        if current == nil { continuation.finish() }
        return stream
    }

    /// Brings the gauges that move with time (the oldest fix's age) up to date, for a metrics backend that is read
    /// now (the other metrics move as things happen).
    public func refreshMetrics() {
        metrics.update(queue.statistics, now: Date())
    }

    /// What it has done so far.
    public var statistics: UplinkStatistics {
        let queued = queue.statistics
        return shared.withLock {
            UplinkStatistics(queue: queued, acknowledged: $0.acknowledged, connections: $0.connections,
                             refusals: $0.refusals, inFlight: $0.inFlight)
        }
    }

    // MARK: The uplink's thread

    private var isStopping: Bool { shared.withLock { $0.isStopping } }

    private func setState(_ new: UplinkState) {
        let observers = shared.withLock { state -> [AsyncStream<UplinkState>.Continuation] in
            guard state.state != new else { return [] }
            state.state = new
            let observers = Array(state.observers.values)
            if case .stopped = new { state.observers = [:] }
            return observers
        }
        metrics.online.record(new == .online ? 1 : 0)
        for observer in observers {
            observer.yield(new)
            if case .stopped = new { observer.finish() }
        }
    }

    private func run() {
        var failures = 0
        while !isStopping {
            setState(.connecting(attempt: failures + 1))
            switch session() {
            case .stopped:
                break
            case .refused(let reason):
                failures += 1
                shared.withLock { $0.refusals += 1 }
                metrics.refusals.increment()
                logger.error("broker \(configuration.broker) refused the connection: \(reason)")
                setState(.refused(reason))
            case .lost(let reason, let wasOnline):
                failures = wasOnline ? 1 : failures + 1
                logger.warning("broker \(configuration.broker): \(reason)")
                setState(.disconnected(reason))
            }
            guard !isStopping else { break }
            let delay = configuration.reconnectPolicy.delay(afterFailures: failures, unit: Double.random(in: 0..<1))
            setState(.waiting(delay))
            let deadline = ContinuousClock.now + delay
            while !isStopping, ContinuousClock.now < deadline {
                wake.wait(timeout: ContinuousClock.now.duration(to: deadline))
            }
        }
        setState(.stopped)
    }

    private enum Outcome {
        case stopped
        case refused(String)
        case lost(String, wasOnline: Bool)
    }

    /// One connection, from its start to its end.
    private func session() -> Outcome {
        let session = Session()
        let connection: MQTTConnection
        do {
            connection = try MQTTConnection(clientID: configuration.clientID, cleanSession: true)
            if let username = configuration.broker.username {
                try connection.setCredentials(username: username, password: configuration.broker.password)
            }
            if let caFile = configuration.tlsCAFile { try connection.setTLS(caFile: caFile) }
            try connection.setWill(topic: statusTopic, payload: Array("offline".utf8), qos: 1, retain: true)
            try connection.setMaxInflight(window + 2)
            connection.onConnect = { session.connack = $0 }
            connection.onDisconnect = { session.lost = $0 }
            connection.onPublish = { [self] in acknowledged($0, in: session) }
            let proceed = shared.withLock { state in
                if !state.isStopping { state.isInConnect = true }
                return !state.isStopping
            }
            guard proceed else { return .stopped }
            defer { shared.withLock { $0.isInConnect = false } }
            try connection.connect(host: configuration.broker.host, port: configuration.broker.port,
                                   keepAlive: Int32(clamping: max(configuration.keepAlive.components.seconds, 1)))
        } catch {
            // stop() may have let this thread go while connect() blocked, and told .stopped already.
            if isStopping { return .stopped }
            return .lost("cannot connect: \(error)", wasOnline: false)
        }
        let connackDeadline = ContinuousClock.now + max(configuration.keepAlive, .seconds(10))
        var online = false
        do {
            while true {
                if isStopping {
                    try close(connection, session, online: online)
                    return .stopped
                }
                if !online, let result = session.connack {
                    guard case .accepted = result else {
                        if case .refused(_, let reason) = result { return .refused(reason) }
                        return .refused("refused")
                    }
                    online = true
                    shared.withLock { $0.connections += 1 }
                    metrics.connections.increment()
                    logger.info("connected to \(configuration.broker)")
                    setState(.online)
                    try connection.publish(topic: statusTopic, payload: Array("online".utf8), qos: 1, retain: true)
                    if shared.withLock({ $0.newest }) == nil, let newest = try queue.newest() {
                        shared.withLock { if $0.newest == nil { $0.newest = newest } }
                    }
                }
                if !online, ContinuousClock.now >= connackDeadline {
                    return .lost("no answer to CONNECT", wasOnline: false)
                }
                if online {
                    try publishState(connection, session)
                    try fillWindow(connection, session)
                }
                flushAcknowledgements(session, force: session.inFlight.isEmpty)
                try drive(connection, timeout: .seconds(1))
                if let code = session.lost {
                    flushAcknowledgements(session, force: true)
                    return refusal(session) ?? .lost("connection lost (\(code))", wasOnline: online)
                }
            }
        } catch {
            flushAcknowledgements(session, force: true)
            // A broker that refuses closes the connection with its CONNACK: the refusal, not the close, is the news.
            return refusal(session) ?? .lost("\(error)", wasOnline: online)
        }
    }

    /// The broker's refusal, if its CONNACK refused the connection.
    private func refusal(_ session: Session) -> Outcome? {
        guard case .refused(_, let reason)? = session.connack else { return nil }
        return .refused(reason)
    }

    /// A connection's own state, on the uplink's thread only.
    private final class Session {
        var connack: MQTTConnectResult?
        var lost: Int32?
        /// Fixes published and not acknowledged: message id → sequence number.
        var inFlight: [Int32: Int64] = [:]
        /// The state topic's message in flight, and the newest fix it was given.
        var stateMessage: Int32?
        var stateSeq: Int64 = 0
        /// Acknowledged fixes not yet removed from the queue.
        var acknowledged: [Int64] = []
        var lastFlush = ContinuousClock.now
        /// Fixes read from the queue and not yet published, and the newest published.
        var buffer: [QueuedFix] = []
        var next = 0
        var cursor: Int64 = 0
    }

    /// The newest fix, retained, on the state topic: one message in flight at a time, the newest when it goes.
    private func publishState(_ connection: MQTTConnection, _ session: Session) throws {
        guard session.stateMessage == nil, let newest = shared.withLock({ $0.newest }), newest.seq > session.stateSeq
        else { return }
        session.stateMessage = try connection.publish(topic: stateTopic, payload: newest.payload, qos: 1, retain: true)
        session.stateSeq = newest.seq
    }

    /// Publishes the queue's next fixes, in order, until the window is full or the queue has none left.
    private func fillWindow(_ connection: MQTTConnection, _ session: Session) throws {
        while session.inFlight.count < window {
            if session.next == session.buffer.count {
                guard queue.statistics.lastSeq > session.cursor else { return }
                session.buffer = try queue.batch(after: session.cursor, limit: configuration.batchSize)
                session.next = 0
                guard !session.buffer.isEmpty else { return }
            }
            let fix = session.buffer[session.next]
            session.next += 1
            let id = try connection.publish(topic: fixTopic, payload: fix.payload, qos: 1, retain: false)
            session.inFlight[id] = fix.seq
            session.cursor = fix.seq
        }
    }

    /// The broker acknowledged message `id` (called by libmosquitto on the uplink's thread).
    private func acknowledged(_ id: Int32, in session: Session) {
        if id == session.stateMessage {
            session.stateMessage = nil
            return
        }
        guard let seq = session.inFlight.removeValue(forKey: id) else { return }
        session.acknowledged.append(seq)
        let arrival = shared.withLock { state in
            state.acknowledged += 1
            return state.arrivals.isEmpty ? nil : state.arrivals.removeValue(forKey: seq)
        }
        metrics.acknowledged.increment()
        if let arrival { metrics.latency.recordNanoseconds(arrival.duration(to: .now).nanoseconds) }
    }

    /// Removes acknowledged fixes from the queue: in batches, or all at once when `force`d or half a second on.
    private func flushAcknowledgements(_ session: Session, force: Bool) {
        shared.withLock { $0.inFlight = session.inFlight.count }
        guard !session.acknowledged.isEmpty else { return }
        let now = ContinuousClock.now
        guard force || session.acknowledged.count >= 256 || session.lastFlush.duration(to: now) > .milliseconds(500)
        else { return }
        // Tried again no sooner than half a second on (or at the connection's end), so a disk that keeps failing
        // is not retried, and logged, at every turn of the loop.
        session.lastFlush = now
        do {
            try queue.remove(session.acknowledged)
            session.acknowledged.removeAll(keepingCapacity: true)
            metrics.update(queue.statistics, now: Date())
        } catch {
            // Kept for the next flush. If the connection ends first they stay in the queue and are sent again at
            // the next connection: the broker gets them twice, the ingest stores them once.
            logger.error("acknowledged fixes not removed from the queue yet: \(error)")
        }
    }

    /// Publishes `offline`, waits (at most 2 s) for it to be acknowledged, and disconnects.
    private func close(_ connection: MQTTConnection, _ session: Session, online: Bool) throws {
        defer { flushAcknowledgements(session, force: true) }
        guard online else { return }
        let id = try connection.publish(topic: statusTopic, payload: Array("offline".utf8), qos: 1, retain: true)
        var offlineAcknowledged = false
        let previous = connection.onPublish
        connection.onPublish = { acknowledgedID in
            if acknowledgedID == id { offlineAcknowledged = true } else { previous?(acknowledgedID) }
        }
        let deadline = ContinuousClock.now + .seconds(2)
        while !offlineAcknowledged, session.lost == nil, ContinuousClock.now < deadline {
            try drive(connection, timeout: ContinuousClock.now.duration(to: deadline))
        }
        connection.disconnect()
        try? drive(connection, timeout: .zero)
    }

    /// Waits (at most `timeout`) for the socket or a wake, then lets libmosquitto read, write and keep alive.
    private func drive(_ connection: MQTTConnection, timeout: Duration) throws(MQTTError) {
        let socket = connection.socket
        var entries = [
            pollfd(fd: wake.fd, events: Int16(POLLIN), revents: 0),
            pollfd(fd: socket, events: Int16(POLLIN) | (connection.wantsWrite ? Int16(POLLOUT) : 0), revents: 0),
        ]
        let count = socket >= 0 ? 2 : 1
        let ready = poll(&entries, nfds_t(count), milliseconds(timeout))
        if ready > 0, entries[0].revents != 0 { wake.drain() }
        if socket >= 0 {
            if entries[1].revents & Int16(POLLIN | POLLERR | POLLHUP) != 0 { try connection.loopRead() }
            if connection.wantsWrite { try connection.loopWrite() }
        }
        try connection.loopMisc()
    }
}

/// An uplink's metrics.
private struct UplinkMetrics: Sendable {
    let depth: Gauge
    let oldestAge: Gauge
    let acknowledged: Counter
    let dropped: Counter
    let connections: Counter
    let refusals: Counter
    let online: Gauge
    let latency: CoreMetrics.Timer

    init(vehicle: VehicleID, factory: any MetricsFactory) {
        let dimensions = [("vehicle", vehicle.rawValue)]
        depth = Gauge(label: "fleet_uplink_queue_depth", dimensions: dimensions, factory: factory)
        oldestAge = Gauge(label: "fleet_uplink_oldest_age_seconds", dimensions: dimensions, factory: factory)
        acknowledged = Counter(label: "fleet_uplink_acknowledged_total", dimensions: dimensions, factory: factory)
        dropped = Counter(label: "fleet_uplink_dropped_total", dimensions: dimensions, factory: factory)
        connections = Counter(label: "fleet_uplink_connections_total", dimensions: dimensions, factory: factory)
        refusals = Counter(label: "fleet_uplink_refusals_total", dimensions: dimensions, factory: factory)
        online = Gauge(label: "fleet_uplink_online", dimensions: dimensions, factory: factory)
        latency = CoreMetrics.Timer(label: "fleet_uplink_fix_latency", dimensions: dimensions, factory: factory)
    }

    func update(_ statistics: FixQueueStatistics, now: Date) {
        depth.record(statistics.depth)
        oldestAge.record(statistics.oldestQueuedAt.map { max(now.timeIntervalSince($0), 0) } ?? 0)
    }
}

extension Duration {
    /// Whole nanoseconds.
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}

import FleetCore
public import GPSDLocation
import GPSDSystem
public import Logging
public import CoreMetrics
import Foundation

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
/// What to do is decided by a value, `UplinkMachine`; two threads of its own carry it out: the network thread
/// (libmosquitto, driven by `poll(2)`, never blocked in a connect) and the queue's writer, so a connection that hangs
/// never holds a fix back from the disk. ``stop()`` joins both.
///
/// ```swift
/// let uplink = try Uplink(configuration: configuration, queue: try FixQueue(directory: "/var/lib/fleet", vehicle: id))
/// uplink.start()
/// for try await fix in gps.updates(delivery: .oncePerEpoch) { uplink.enqueue(fix) }
/// await uplink.stop()
/// ```
///
/// Or, in a task (a `ServiceGroup`'s, say) that is cancelled to stop it: `await uplink.run()`.
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

    let logger: Logger
    let wake: WakePipe
    /// Wakes the writer from its wait before it tries a failed write again.
    let writerWake: WakePipe
    let shared = Locked(UplinkShared())
    let metrics: UplinkMetrics

    /// An uplink for `queue`'s vehicle; ``start()`` starts it.
    public init(configuration: UplinkConfiguration, queue: FixQueue, logger: Logger = Logger(label: "fleet-uplink"),
                metricsFactory: (any MetricsFactory)? = nil) throws(UplinkError) {
        self.configuration = configuration
        self.queue = queue
        self.logger = logger
        do {
            wake = try WakePipe()
            writerWake = try WakePipe()
        } catch {
            throw .system(error.function, error.number)
        }
        metrics = UplinkMetrics(vehicle: configuration.vehicle, factory: metricsFactory ?? MetricsSystem.factory)
        shared.withLock { $0.droppedCounted = queue.statistics.dropped }
        metrics.update(queue.statistics, now: Date())
    }

    /// Starts connecting and publishing, on threads of its own. Once only; later calls do nothing.
    public func start() {
        // The threads are counted here, with the decision, so that a stop() after it waits for them.
        let (network, writer) = shared.withLock { shared -> (Bool, Bool) in
            guard !shared.isStarted, !shared.isStopping else { return (false, false) }
            shared.isStarted = true
            shared.reserveWorker()
            return (true, shared.reserveWriterIfNeeded())
        }
        if network { startWorker("fleet-uplink", isWriter: false) { UplinkDriver(uplink: self).run() } }
        if writer { startWriter() }
    }

    /// Starts the uplink and keeps it running until the calling task is cancelled (or ``stop()`` is called), then
    /// stops it as ``stop()`` does: for a `ServiceGroup`, or a task group beside the fixes' loop.
    public func run() async {
        start()
        for await _ in statusChanges() {}   // ends at the stop, or when the task is cancelled
        await stop()
    }

    /// Keeps `location` in the queue (on the queue's own thread; this returns at once) and publishes it.
    ///
    /// Fixes that come while the queue is writing are written together, in one transaction, after it: a burst (a
    /// replay, a receiver at 20 Hz) costs one commit per write, not one per fix. A fix that cannot be sent (no calendar
    /// time, a non-finite position: none from gpsd is such) is logged and left. After ``stop()`` nothing is taken.
    public func enqueue(_ location: Location) {
        let (taken, writer, warn) = shared.withLock { shared -> (Bool, Bool, Bool) in
            guard !shared.isStopping else {
                defer { shared.warnedAfterStop = true }
                return (false, false, !shared.warnedAfterStop)
            }
            shared.pending.append(location)
            return (true, shared.reserveWriterIfNeeded(), false)
        }
        if warn { logger.warning("fixes given after the stop are not queued (logged once)") }
        if taken, writer { startWriter() }
    }

    /// Waits until every fix given to ``enqueue(_:)`` so far is in the queue, or held in memory after a write of
    /// the queue failed (``UplinkStatistics/held``; written at a later try).
    public func flushQueue() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = shared.withLock { shared in
                guard shared.isWriterRunning, shared.isWriting || !shared.pending.isEmpty else { return true }
                shared.flushWaiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Waits until the queue is empty and nothing is in flight: every fix given so far is acknowledged (or the uplink
    /// has stopped).
    public func drained() async {
        await flushQueue()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ended = shared.withLock { shared in
                guard !shared.threadsAreDone else { return true }
                shared.drainWaiters.append(continuation)
                return false
            }
            // The network thread looks at the queue at its next turn, which this wake makes now.
            if ended { continuation.resume() } else { wake.signal() }
        }
    }

    /// Stops: the fixes given so far are queued, `offline` is published on the status topic when connected (waiting
    /// up to 2 s for the broker to take it), the connection is closed and both threads are joined. What is not
    /// acknowledged stays in the queue for the next start.
    public func stop() async {
        await flushQueue()
        shared.withLock { $0.isStopping = true }
        wake.signal()
        writerWake.signal()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ended = shared.withLock { shared in
                guard !shared.threadsAreDone else { return true }
                shared.endWaiters.append(continuation)
                return false
            }
            if ended { continuation.resume() }
        }
        // Each thread told its end as the last thing it did: these joins wait for its return at most (a moment of
        // this task's thread, where waiting for it with a continuation would cost a thread hop for nothing).
        for thread in shared.withLock({ $0.threads }) { thread.join() }
        setState(.stopped)
    }

    /// The state now.
    public var state: UplinkState { shared.withLock { $0.state } }

    /// The state now, then each change, until ``stop()``.
    public func statusChanges() -> AsyncStream<UplinkState> {
        let (stream, continuation) = AsyncStream.makeStream(of: UplinkState.self, bufferingPolicy: .bufferingNewest(64))
        let id = shared.withLock { shared -> Int? in
            if case .stopped = shared.state { return nil }
            let id = shared.nextObserver
            shared.nextObserver += 1
            shared.observers[id] = continuation
            // Under the lock, so that a change made meanwhile on the network thread (yielded after its own unlock)
            // cannot reach this new stream before the older state it replaced. Nobody iterates the stream yet: the
            // yield only buffers, and runs none of the caller's code.
            continuation.yield(shared.state)
            return id
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in self?.shared.withLock { _ = $0.observers.removeValue(forKey: id) } }
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
            UplinkStatistics(queue: queued, acknowledged: $0.counts.acknowledged, connections: $0.counts.connections,
                             refusals: $0.counts.refusals, inFlight: $0.counts.inFlight, held: $0.held.count,
                             queueWriteFailures: $0.queueWriteFailures, lost: $0.lost)
        }
    }

    // MARK: - For the threads

    /// Tells every observer of the state of a change.
    func setState(_ new: UplinkState) {
        let observers = shared.withLock { shared -> [AsyncStream<UplinkState>.Continuation] in
            guard shared.state != new else { return [] }
            shared.state = new
            let observers = Array(shared.observers.values)
            if case .stopped = new { shared.observers = [:] }
            return observers
        }
        metrics.online.record(new == .online ? 1 : 0)
        for observer in observers {
            observer.yield(new)
            if case .stopped = new { observer.finish() }
        }
    }

    /// Starts `body` on a thread of its own, reserved (``UplinkShared/reserveWorker()``) by the caller and joined by
    /// ``stop()``. A thread that cannot be started is logged, and its waiters let go.
    func startWorker(_ name: String, isWriter: Bool, _ body: @escaping @Sendable () -> Void) {
        do {
            let thread = try SystemThread.start(name: name) { [self] in
                body()
                let waiters = shared.withLock { $0.threadEnded(isWriter: isWriter) }
                for waiter in waiters { waiter.resume() }
            }
            let waiters = shared.withLock { $0.threadRegistered(thread) }
            for waiter in waiters { waiter.resume() }
        } catch {
            logger.critical("cannot start the thread \(name): \(error)")
            let waiters = shared.withLock { $0.threadFailedToStart(isWriter: isWriter) }
            for waiter in waiters { waiter.resume() }
        }
    }
}

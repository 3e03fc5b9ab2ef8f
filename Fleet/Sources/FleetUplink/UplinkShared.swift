import CoreMetrics
import FleetCore
import Foundation
import GPSDLocation
import GPSDSystem

/// What the uplink's callers and its two threads share, under its one lock. The machine itself is not here: it
/// belongs to the network thread alone, which learns of new fixes and of a stop from ``newest`` and ``isStopping``.
struct UplinkShared {
    var state = UplinkState.connecting(attempt: 1)
    var isStarted = false
    /// ``Uplink/stop()`` was called: the threads end, and nothing more is taken.
    var isStopping = false
    var observers: [Int: AsyncStream<UplinkState>.Continuation] = [:]
    var nextObserver = 0
    /// The machine's counts, as of the network thread's last turn.
    var counts = Counts()

    // The writer's.
    /// Fixes given and not yet written, and whether a write is under way.
    var pending: [Location] = []
    var isWriting = false
    /// Fixes a failed write kept in memory, written before the pending ones at the next try.
    var held: [Location] = []
    var queueWriteFailures: Int64 = 0
    /// Fixes held in memory and dropped: beyond the bound, or at the stop with the queue still failing.
    var lost: Int64 = 0
    /// The writer was reserved (it is not started again), and it runs (reserved, and not ended or failed to start).
    var isWriterStarted = false
    var isWriterRunning = false
    var warnedAfterStop = false
    var flushWaiters: [CheckedContinuation<Void, Never>] = []
    /// The newest fix written, for the network thread to take.
    var newest: QueuedFix?
    /// When fixes sent as they came arrived from gpsd, by sequence number, until acknowledged.
    var arrivals: [Int64: ContinuousClock.Instant] = [:]
    /// The queue's drops already counted in the metrics.
    var droppedCounted: Int64 = 0

    // The threads'.
    var threads: [SystemThread] = []
    /// Threads reserved and not ended, and reserved and not yet registered (their ``threads`` entry).
    var threadsRunning = 0
    var threadsUnregistered = 0
    var endWaiters: [CheckedContinuation<Void, Never>] = []
    var drainWaiters: [CheckedContinuation<Void, Never>] = []

    /// Every thread reserved has ended and is in ``threads``: ``Uplink/stop()`` joins them.
    var threadsAreDone: Bool { threadsRunning == 0 && threadsUnregistered == 0 }

    /// Counts a thread about to be started, under the same lock as the decision to start it.
    mutating func reserveWorker() {
        threadsRunning += 1
        threadsUnregistered += 1
    }

    /// Reserves the writer unless it was already: whether the caller starts it.
    mutating func reserveWriterIfNeeded() -> Bool {
        guard !isWriterStarted else { return false }
        isWriterStarted = true
        isWriterRunning = true
        reserveWorker()
        return true
    }

    mutating func threadRegistered(_ thread: SystemThread) -> [CheckedContinuation<Void, Never>] {
        threads.append(thread)
        threadsUnregistered -= 1
        return takeWaitersIfDone()
    }

    mutating func threadEnded(isWriter: Bool) -> [CheckedContinuation<Void, Never>] {
        threadsRunning -= 1
        return (isWriter ? writerGone() : []) + takeWaitersIfDone()
    }

    mutating func threadFailedToStart(isWriter: Bool) -> [CheckedContinuation<Void, Never>] {
        threadsRunning -= 1
        threadsUnregistered -= 1
        if isWriter { isWriterStarted = false }   // the next fix tries again
        return (isWriter ? writerGone() : []) + takeWaitersIfDone()
    }

    /// The writer no longer runs: the flushes waiting for it are let go.
    private mutating func writerGone() -> [CheckedContinuation<Void, Never>] {
        isWriterRunning = false
        defer { flushWaiters = [] }
        return flushWaiters
    }

    /// Once every thread is done: the stops and the waits for a drained queue (there is nothing more to drain).
    private mutating func takeWaitersIfDone() -> [CheckedContinuation<Void, Never>] {
        guard threadsAreDone else { return [] }
        defer { (endWaiters, drainWaiters) = ([], []) }
        return endWaiters + drainWaiters
    }

    struct Counts: Equatable {
        var acknowledged: Int64 = 0
        var connections = 0
        var refusals = 0
        var inFlight = 0
    }
}

/// An uplink's metrics.
struct UplinkMetrics: Sendable {
    let depth: Gauge
    let oldestAge: Gauge
    let acknowledged: Counter
    let dropped: Counter
    let connections: Counter
    let refusals: Counter
    let online: Gauge
    let latency: CoreMetrics.Timer
    let held: Gauge
    let queueWriteFailures: Counter

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
        held = Gauge(label: "fleet_uplink_held_fixes", dimensions: dimensions, factory: factory)
        queueWriteFailures = Counter(label: "fleet_uplink_queue_write_failures_total", dimensions: dimensions,
                                     factory: factory)
    }

    func update(_ statistics: FixQueueStatistics, now: Date) {
        depth.record(statistics.depth)
        oldestAge.record(statistics.oldestQueuedAt.map { max(now.timeIntervalSince($0), 0) } ?? 0)
    }
}

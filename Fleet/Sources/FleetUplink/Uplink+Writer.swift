import CoreMetrics
import FleetCore
import Foundation
import GPSDLocation
import GPSDSystem
import Logging

// The queue's writer: a thread of its own that writes the fixes given to `enqueue` in one transaction per write,
// so that a network that hangs never holds a fix back from the disk, and a burst costs one commit.
extension Uplink {
    /// Starts the writer, reserved by ``UplinkShared/reserveWriterIfNeeded()`` at the first fix or at the start.
    func startWriter() {
        startWorker("fleet-uplink-q", isWriter: true) { self.write() }
    }

    /// The writer's loop: waits for fixes (or the stop), writes them, tells the network thread and the flushes. A
    /// write that fails (a full disk, a damaged file) keeps its fixes in memory (``maximumHeld`` at most, the oldest
    /// dropped and counted beyond) and is tried again every ``retryDelay``, with the fixes given meanwhile; told once
    /// when it starts failing and once when it writes again.
    private func write() {
        var failure: String?
        while true {
            let taken = shared.withLock(when: { !$0.pending.isEmpty || !$0.held.isEmpty || $0.isStopping }) {
                shared -> (fixes: [Location], isLast: Bool)? in
                guard !shared.pending.isEmpty || !shared.held.isEmpty else { return nil }
                shared.isWriting = true
                defer { (shared.held, shared.pending) = ([], []) }
                return (shared.held + shared.pending, shared.isStopping)
            }
            guard let taken else { break }
            let outcome = append(taken.fixes)
            let held = outcome.failure == nil || taken.isLast ? [] : Array(taken.fixes.suffix(Self.maximumHeld))
            let dropped = outcome.failure == nil ? 0 : taken.fixes.count - held.count
            let waiters = shared.withLock { shared -> [CheckedContinuation<Void, Never>] in
                shared.isWriting = false
                shared.held = held
                if let newest = outcome.newest { shared.newest = newest }
                if outcome.failure != nil { shared.queueWriteFailures += 1 }
                shared.lost += Int64(dropped)
                guard shared.pending.isEmpty else { return [] }
                defer { shared.flushWaiters = [] }
                return shared.flushWaiters
            }
            metrics.held.record(held.count)
            if outcome.newest != nil { wake.signal() }
            for waiter in waiters { waiter.resume() }
            if let error = outcome.failure {
                metrics.queueWriteFailures.increment()
                if dropped > 0 { metrics.dropped.increment(by: dropped) }
                if taken.isLast {
                    logger.error("\(taken.fixes.count) fixes lost at the stop: the queue cannot be written (\(error))")
                } else if failure == nil {
                    logger.error("""
                        the queue cannot be written (\(error)): holding \(held.count) fixes in memory, \
                        trying again every \(Self.retryDelay.secondsText)
                        """)
                } else if dropped > 0 {
                    logger.warning("\(dropped) fixes dropped: more than \(Self.maximumHeld) held in memory")
                }
                failure = error
                _ = try? writerWake.poll(nil, events: 0, timeout: Self.retryDelay)
            } else if failure != nil {
                logger.notice("the queue is written again: \(taken.fixes.count) fixes held in memory are in it")
                failure = nil
            }
        }
    }

    /// Writes `fixes` in one transaction: the newest, for the state topic, or why the queue could not be written.
    private func append(_ fixes: [Location]) -> (newest: QueuedFix?, failure: String?) {
        let sendable = fixes.filter { fix in
            let isSendable = fix.coordinate.latitude.isFinite && fix.coordinate.longitude.isFinite
                && GPSDTime.string(from: fix.timestamp) != nil
            if !isSendable { logger.error("fix not queued: it has no calendar time or a non-finite position: \(fix)") }
            return isSendable
        }
        guard !sendable.isEmpty else { return (nil, nil) }
        let messages: [FleetMessage], newestPayload: [UInt8]
        do {
            messages = try queue.append(contentsOf: sendable)
            guard let newest = messages.last else { return (nil, nil) }
            newestPayload = try newest.payload()
        } catch {
            return (nil, "\(error)")
        }
        let statistics = queue.statistics
        let newDrops = shared.withLock { shared in
            // Only fixes sent soon are timed: during an outage the times are let go (a backlog is not live).
            if shared.arrivals.count + messages.count > Self.maximumTimed { shared.arrivals.removeAll() }
            for (message, fix) in zip(messages, sendable) {
                if let instant = fix.arrival?.instant { shared.arrivals[message.seq] = instant }
            }
            defer { shared.droppedCounted = statistics.dropped }
            return statistics.dropped - shared.droppedCounted
        }
        if newDrops > 0 {
            metrics.dropped.increment(by: newDrops)
            logger.warning("queue full (\(queue.capacity) fixes): dropped the oldest \(newDrops)")
        }
        metrics.update(statistics, now: Date())
        return (QueuedFix(seq: messages[messages.count - 1].seq, payload: newestPayload), nil)
    }

    /// Arrival times kept for latency, at most: a longer backlog's fixes are not timed.
    static let maximumTimed = 4096
    /// Fixes kept in memory while the queue cannot be written, at most: 14 hours at 1 Hz.
    static let maximumHeld = 50_000
    /// How long the writer waits before it tries a failed write again.
    static let retryDelay: Duration = .seconds(1)
}

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

    /// The writer's loop: waits for fixes (or the stop), writes them, tells the network thread and the flushes.
    private func write() {
        while true {
            let fixes = shared.withLock(when: { !$0.pending.isEmpty || $0.isStopping }) { shared -> [Location]? in
                guard !shared.pending.isEmpty else { return nil }
                shared.isWriting = true
                defer { shared.pending.removeAll(keepingCapacity: true) }
                return shared.pending
            }
            guard let fixes else { break }
            let newest = append(fixes)
            let waiters = shared.withLock { shared -> [CheckedContinuation<Void, Never>] in
                shared.isWriting = false
                if let newest { shared.newest = newest }
                guard shared.pending.isEmpty else { return [] }
                defer { shared.flushWaiters = [] }
                return shared.flushWaiters
            }
            if newest != nil { wake.signal() }
            for waiter in waiters { waiter.resume() }
        }
    }

    /// Writes `fixes` in one transaction; returns the newest, for the state topic.
    private func append(_ fixes: [Location]) -> QueuedFix? {
        let sendable = fixes.filter { fix in
            let isSendable = fix.coordinate.latitude.isFinite && fix.coordinate.longitude.isFinite
                && GPSDTime.string(from: fix.timestamp) != nil
            if !isSendable { logger.error("fix not queued: it has no calendar time or a non-finite position: \(fix)") }
            return isSendable
        }
        guard !sendable.isEmpty else { return nil }
        let messages: [FleetMessage], newestPayload: [UInt8]
        do {
            messages = try queue.append(contentsOf: sendable)
            guard let newest = messages.last else { return nil }
            newestPayload = try newest.payload()
        } catch {
            logger.error("\(sendable.count) fixes not queued: \(error)")
            return nil
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
        return QueuedFix(seq: messages[messages.count - 1].seq, payload: newestPayload)
    }

    /// Arrival times kept for latency, at most: a longer backlog's fixes are not timed.
    static let maximumTimed = 4096
}

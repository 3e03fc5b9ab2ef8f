import GPSDSystem

/// Holds a replay back while a consumer falls behind: at any pace, a recording goes no faster than its slowest
/// consumer, and no consumer's buffer needs to drop anything.
///
/// The buffers own it, as in swift-nio's `NIOAsyncSequenceProducer` with its high and low watermarks: each buffer
/// between the replay and a consumer (a stream's channel, the delegate's outbox, the notices queued for a hand-over)
/// joins as a ``PacedConsumer`` and reports its depth, under its own lock, whenever it changes. A depth that
/// reaches ``limit`` (the high watermark) says "stop"; one back down to ``resumeBacklog`` (the low) says "produce
/// more". Before each report, the replay's thread looks whether any buffer said stop; if so it hands on what it
/// read before and waits, until every such buffer is back down, has left, or the session closes.
/// Waiting for half the backlog to go, rather than for one event, lets the replay hand on a run of events each
/// time it wakes, instead of waking once an event while its consumer is the slower. A consumer's backlog is thus
/// at most ``limit`` plus the events of one read (``ReportReader`` reads 64 KB at a time).
///
/// Only the replay's own thread waits, in poll(2) on its ``WakePipe``; consumers never block. Whoever takes the
/// last backlog it waits for down to ``resumeBacklog`` (a take, a consumer leaving) decides so under the lock and
/// wakes the thread after it. Live sources have none of this: gpsd cannot wait, and their consumers' buffers keep what their policy
/// says.
package final class ReplayBackpressure: Sendable {
    /// How many events a consumer may have not taken before the replay waits for it: 16.
    package static let defaultLimit = 16

    /// The backlog at which the replay waits for a consumer.
    package let limit: Int
    /// The backlog a consumer the replay waits for must get down to before it goes on: half the limit.
    package var resumeBacklog: Int { limit / 2 }

    private struct State {
        /// Each buffer's depth as it last reported it, by its number, and whether the replay waits for it.
        var backlogs: [Int: (count: Int, behind: Bool)] = [:]
        var nextID = 0
        /// How many consumers the replay waits for: each reached ``limit`` and has not yet got down to
        /// ``resumeBacklog``. The replay waits while this is above zero.
        var behind = 0
        /// The pipe of the replay's thread while it waits for its consumers.
        var waiting: WakePipe?
        /// How many times the replay has waited for its consumers.
        var waits = 0
        /// Tasks waiting for the replay to have waited a number of times (tests).
        var waitWatchers: [(waits: Int, continuation: CheckedContinuation<Void, Never>)] = []

        /// The waiting replay's pipe, taken out to be woken after the lock, if no consumer is behind any more.
        mutating func release() -> WakePipe? {
            guard behind == 0, let pipe = waiting else { return nil }
            waiting = nil
            return pipe
        }
    }

    private let state = Locked(State())

    /// - Parameter limit: the backlog at which the replay waits (at least 1).
    package init(limit: Int = ReplayBackpressure.defaultLimit) {
        self.limit = max(1, limit)
    }

    /// A new consumer, with nothing handed on yet. It stops counting when it leaves, or goes.
    package func join() -> PacedConsumer {
        PacedConsumer(self, id: state.withLock { state in
            defer { state.nextID += 1 }
            state.backlogs[state.nextID] = (0, false)
            return state.nextID
        })
    }

    /// Whether a consumer is behind: the replay would wait for it before its next report. For tests.
    package var wouldHoldBack: Bool { state.withLock { $0.behind > 0 } }

    /// Whether the replay's thread is waiting for a consumer now: for tests.
    package var isHoldingBack: Bool { state.withLock { $0.waiting != nil } }

    /// How many times the replay's thread has waited for its consumers: for tests.
    package var waitCount: Int { state.withLock { $0.waits } }

    /// Returns once the replay's thread has begun to wait for its consumers `times` times in all: for tests,
    /// which await this instead of polling.
    package func heldBack(times: Int = 1) async {
        await withCheckedContinuation { continuation in
            let reached = state.withLock { state -> Bool in
                guard state.waits < times else { return true }
                state.waitWatchers.append((times, continuation))
                return false
            }
            if reached { continuation.resume() }
        }
    }

    // MARK: The consumers' side

    /// Consumer `id`'s buffer holds `depth` events not yet taken: at ``limit`` the replay is to wait for it, back
    /// at ``resumeBacklog`` it may go on (and is woken, if that was the last it waited for).
    fileprivate func buffered(_ id: Int, depth: Int) {
        let wake = state.withLock { state -> WakePipe? in
            guard var backlog = state.backlogs[id] else { return nil }   // it has left
            backlog.count = depth
            if !backlog.behind, depth >= limit {
                backlog.behind = true
                state.behind += 1
            } else if backlog.behind, depth <= resumeBacklog {
                backlog.behind = false
                state.behind -= 1
            }
            state.backlogs[id] = backlog
            return state.release()
        }
        wake?.signal()
    }

    /// The depth consumer `consumer` last reported; `nil` once it has left. For tests.
    package func depth(of consumer: PacedConsumer) -> Int? {
        state.withLock { $0.backlogs[consumer.id]?.count }
    }

    /// Forgets consumer `id`, and wakes the replay if it was waiting for it alone.
    fileprivate func leave(_ id: Int) {
        let wake = state.withLock { state -> WakePipe? in
            guard let backlog = state.backlogs.removeValue(forKey: id) else { return nil }
            if backlog.behind { state.behind -= 1 }
            return state.release()
        }
        wake?.signal()
    }

    // MARK: The replay's side

    /// On the replay's thread, before it hands a report on: while any consumer has ``limit`` or more events it
    /// has not taken, hands on what came before (`flush`) and waits until none has, or the session closes.
    /// - Throws: the failed poll(2).
    func waitForConsumers(on reader: ReaderThread, flushing flush: () -> Void) throws(SystemError) {
        guard state.withLock({ $0.behind > 0 }) else { return }
        flush()   // what came before is theirs to take meanwhile
        defer {
            state.withLock { state in
                if state.waiting === reader.wake { state.waiting = nil }
            }
        }
        var counted = false
        while !reader.isClosed {
            // Registered under the lock that decides it, so a take just after this still finds the pipe to wake,
            // and the pipe keeps the wake until poll(2) sees it.
            let (behind, watchers) = state.withLock { state -> (Bool, [CheckedContinuation<Void, Never>]) in
                guard state.behind > 0 else { return (false, []) }
                state.waiting = reader.wake
                guard !counted else { return (true, []) }
                state.waits += 1
                let waits = state.waits
                defer { state.waitWatchers.removeAll { $0.waits <= waits } }
                return (true, state.waitWatchers.filter { $0.waits <= waits }.map(\.continuation))
            }
            guard behind else { return }
            counted = true
            for watcher in watchers { watcher.resume() }
            _ = try reader.wake.wait(for: nil, timeout: nil)
        }
    }
}

/// One buffer's account with a replay's ``ReplayBackpressure``: the buffer reports its depth whenever it changes,
/// under its own lock, so that reports come in the order of the changes. Leaving (or going) releases the replay
/// from waiting for it.
package final class PacedConsumer: Sendable {
    private let backpressure: ReplayBackpressure
    fileprivate let id: Int

    fileprivate init(_ backpressure: ReplayBackpressure, id: Int) {
        self.backpressure = backpressure
        self.id = id
    }

    deinit { backpressure.leave(id) }

    /// The buffer now holds `depth` events its consumer has not taken: at the limit the replay waits, and goes on
    /// once every buffer it waits for is back to half.
    package func buffered(_ depth: Int) { backpressure.buffered(id, depth: depth) }

    /// The consumer takes nothing more: the replay no longer waits for it. Calling it again does nothing.
    package func leave() { backpressure.leave(id) }
}

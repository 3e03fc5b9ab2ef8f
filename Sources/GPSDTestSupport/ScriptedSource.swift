package import GPSDLocation

/// A ``LocationSource`` a test drives by hand: every event is delivered synchronously, on the test's thread,
/// by ``send(_:)``. It records how often it was started, stopped and polled, and lets a test await a start.
package final class ScriptedSource: LocationSource {
    private struct State {
        var handler: (@Sendable (SourceEvent) -> Void)?
        var starts = 0
        var stops = 0
        var polls = 0
        var startWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Locked(State())

    package init() {}

    package func start(_ handler: @escaping @Sendable (SourceEvent) -> Void) {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.handler = handler
            state.starts += 1
            let starts = state.starts
            let ready = state.startWaiters.filter { $0.count <= starts }.map(\.continuation)
            state.startWaiters.removeAll { $0.count <= starts }
            return ready
        }
        ready.forEach { $0.resume() }
    }

    package func stop() {
        state.withLock {
            $0.handler = nil
            $0.stops += 1
        }
    }

    package func poll() { state.withLock { $0.polls += 1 } }

    /// Whether the source is started and not stopped.
    package var isRunning: Bool { state.withLock { $0.handler != nil } }
    package var startCount: Int { state.withLock { $0.starts } }
    package var stopCount: Int { state.withLock { $0.stops } }
    package var pollCount: Int { state.withLock { $0.polls } }

    /// Delivers `event` to the running handler, synchronously. Returns false if the source is not running.
    @discardableResult
    package func send(_ event: SourceEvent) -> Bool {
        guard let handler = state.withLock({ $0.handler }) else { return false }
        handler(event)
        return true
    }

    /// Delivers a fix report.
    @discardableResult
    package func send(_ location: Location) -> Bool { send(.report(.fix(location))) }

    /// Returns once the source has been started at least `count` times in all.
    package func waitForStart(count: Int = 1) async {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Bool in
                if state.starts >= count { return true }
                state.startWaiters.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }
}

/// A ``ManagerClock`` that moves only when the test says so; due timers run synchronously in ``advance(by:)``.
package final class ManualManagerClock: ManagerClock {
    private struct State {
        var now: Duration = .zero
        var timers: [(deadline: Duration, action: @Sendable () -> Void)] = []
    }

    private let state = Locked(State())

    package init() {}

    package var now: Duration { state.withLock { $0.now } }

    package var pendingTimerCount: Int { state.withLock { $0.timers.count } }

    package func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) {
        state.withLock { $0.timers.append(($0.now + delay, action)) }
    }

    /// Moves time forward and runs, in deadline order, every timer that is then due.
    package func advance(by duration: Duration) {
        let due = state.withLock { state -> [@Sendable () -> Void] in
            state.now += duration
            let now = state.now
            let due = state.timers.filter { $0.deadline <= now }.sorted { $0.deadline < $1.deadline }
            state.timers.removeAll { $0.deadline <= now }
            return due.map(\.action)
        }
        due.forEach { $0() }
    }
}

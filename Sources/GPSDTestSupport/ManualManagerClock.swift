import Foundation
package import GPSDLocation
import GPSDSystem

/// A ``ManagerClock`` that moves only when the test says so; due timers run synchronously in ``advance(by:)``.
package final class ManualManagerClock: ManagerClock {
    private struct State {
        var now: Duration = .zero
        var timers: [(deadline: Duration, action: @Sendable () -> Void)] = []
    }

    private let state = Locked(State())
    private let origin = ContinuousClock.now

    package init() {}

    package var now: Duration { state.withLock { $0.now } }

    /// The manual time as a fix's arrival: from this clock's making on the monotonic clock, and from
    /// 2025-06-01T12:00:00Z on the wall clock.
    package var arrival: Location.Arrival {
        let now = now
        return Location.Arrival(instant: origin.advanced(by: now),
                                date: Date(timeIntervalSince1970: 1_748_779_200 + Double(now.components.seconds)))
    }

    package var pendingTimerCount: Int { state.withLock { $0.timers.count } }

    package func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) {
        guard !delay.meansNever else { return }
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

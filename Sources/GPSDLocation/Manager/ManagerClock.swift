import Dispatch

/// Monotonic time and timers for ``LocationManager``: the real one by default, a manual one in tests.
package protocol ManagerClock: Sendable {
    /// Monotonic time since an arbitrary origin.
    var now: Duration { get }
    /// Runs `action` once, `delay` from now, on some thread.
    func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void)
}

/// The system's monotonic clock and Dispatch timers.
package struct SystemManagerClock: ManagerClock {
    private static let origin = ContinuousClock.now

    package init() {}

    package var now: Duration { Self.origin.duration(to: .now) }

    package func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) {
        // Clamped to a century, so a timeout meaning "never" (`.seconds(Int64.max)`) cannot overflow.
        let seconds = min(max(delay.components.seconds, 0), 100 * 365 * 86_400)
        let nanoseconds = seconds * 1_000_000_000 + max(0, delay.components.attoseconds) / 1_000_000_000
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(nanoseconds)), execute: action)
    }
}

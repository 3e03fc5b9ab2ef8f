import Dispatch
import FoundationEssentials

/// Monotonic time and timers for the manager: the real one by default, a manual one in tests. (It lives here, below
/// the manager, with the `Duration` helpers the model's values use.)
package protocol ManagerClock: Sendable {
    /// Monotonic time since an arbitrary origin.
    var now: Duration { get }
    /// Now, for a fix's ``Location/arrival``: by the monotonic clock and the wall clock.
    var arrival: Location.Arrival { get }
    /// Runs `action` once, `delay` from now, on some thread; never, for a delay that means never.
    func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void)
}

extension Duration {
    /// In seconds, as a `Double` (for `Date` arithmetic). Any duration: one beyond `Int64.max` seconds either
    /// way (a `Duration` holds more), whose ``components`` would trap, is divided instead.
    package var timeInterval: Double {
        guard self < .seconds(Int64.max), self > .seconds(Int64.min) else { return self / .seconds(1) }
        return Double(components.seconds) + Double(components.attoseconds) * 1e-18
    }

    /// A century: waits this long or longer are taken to mean "never", and no timer is set for them (timers
    /// and clocks that count in 64-bit nanoseconds would overflow on `.seconds(Int64.max)`).
    package static let never = Duration.seconds(100 * 365 * 86_400)

    /// Whether a wait this long means "never" (see ``never``).
    package var meansNever: Bool { self >= .never }

    /// As a timeout: from zero (a negative one has passed already) to ``never``, so that no timer or clock
    /// meets a duration its 64-bit seconds cannot hold.
    package var asTimeout: Duration { self < .zero ? .zero : meansNever ? .never : self }
}

/// The system's monotonic clock and Dispatch timers.
package struct SystemManagerClock: ManagerClock {
    private static let origin = ContinuousClock.now

    package init() {}

    package var now: Duration { Self.origin.duration(to: .now) }

    package var arrival: Location.Arrival { Location.Arrival(instant: .now, date: .now) }

    package func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) {
        guard !delay.meansNever else { return }
        let (seconds, attoseconds) = delay.asTimeout.components
        let nanoseconds = max(0, seconds) * 1_000_000_000 + max(0, attoseconds) / 1_000_000_000
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(nanoseconds)), execute: action)
    }
}

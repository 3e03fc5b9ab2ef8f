import Glibc

/// How a ``LocationManager`` reconnects when the connection to gpsd fails or cannot be made while fixes are
/// wanted: after a delay that starts at ``initialDelay`` and grows by ``multiplier`` per failed attempt up to
/// ``maximumDelay``, each varied by up to ±``jitter`` of itself so that many clients do not retry in step.
///
/// The default, 0.25 s doubling to 8 s with 20 % jitter, retries without end; ``never`` turns reconnection off
/// (a failure then ends the watch with its error, as without this policy).
///
/// ```swift
/// manager.reconnectPolicy = ReconnectPolicy(initialDelay: .seconds(1), maximumDelay: .seconds(30))
/// ```
public struct ReconnectPolicy: Sendable, Hashable {
    /// The delay before the first attempt after a failure.
    public var initialDelay: Duration
    /// How much the delay grows per failed attempt.
    public var multiplier: Double
    /// The longest delay.
    public var maximumDelay: Duration
    /// How much each delay may vary, as a fraction of it (0.2: ±20 %).
    public var jitter: Double
    /// How many times in a row to retry after failed attempts before the watch ends with the last error; `nil`:
    /// no limit, 0: never. The count starts over only once a connection proves good: it brings a fix, or holds
    /// for 10 s. A peer that greets and hangs up does not reset it.
    public var maximumRetries: Int?

    /// 0.25 s doubling to 8 s, ±20 %, without end.
    public static let `default` = ReconnectPolicy()

    /// No reconnection: a failed connection ends the watch with its error.
    public static let never = ReconnectPolicy(maximumRetries: 0)

    public init(
        initialDelay: Duration = .milliseconds(250), multiplier: Double = 2, maximumDelay: Duration = .seconds(8),
        jitter: Double = 0.2, maximumRetries: Int? = nil
    ) {
        self.initialDelay = initialDelay
        self.multiplier = multiplier
        self.maximumDelay = maximumDelay
        self.jitter = jitter
        self.maximumRetries = maximumRetries
    }

    /// Whether to try again after `failures` attempts in a row have failed.
    public func allowsRetry(afterFailures failures: Int) -> Bool {
        maximumRetries.map { failures <= $0 } ?? true
    }

    /// The delay before trying again after `failures` (from 1) attempts in a row have failed, with `unit`
    /// (0 ..< 1, uniformly random in use) choosing where in the jitter it falls: a pure function, so tests can
    /// check every delay. `initialDelay` after one failure, then growing by `multiplier` up to `maximumDelay`;
    /// in whole microseconds.
    ///
    /// Any policy gives a delay, at once: a negative delay counts as none, a multiplier below 1 (or NaN) as 1,
    /// jitter is taken from 0 to 1 (NaN: none), and a delay of a century or more is a century, which the manager
    /// takes to mean that it does not reconnect.
    public func delay(afterFailures failures: Int, unit: Double) -> Duration {
        let never = Duration.never.timeInterval
        let initial = min(max(initialDelay.timeInterval, 0), never), maximum = min(max(maximumDelay.timeInterval, 0), never)
        let factor = multiplier >= 1 ? multiplier : 1
        // Grown in one step (a loop would run `failures` times): past the cap, or to infinity, the cap holds.
        let steps = failures > 1 ? Double(failures - 1) : 0
        let growth = initial == 0 || factor == 1 ? initial : initial * pow(factor, steps)
        let base = min(growth, maximum)
        guard base < never else { return .never }   // jitter would bring it back under a century
        let spread = jitter >= 0 ? min(jitter, 1) : 0
        let place = unit >= 0 ? min(unit, 1) : 0
        let jittered = min(base * (1 - spread + 2 * spread * place), never)
        return .microseconds(Int64((jittered * 1_000_000).rounded()))   // whole microseconds, at most a century's
    }
}

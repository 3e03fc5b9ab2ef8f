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
    /// no limit, 0: never.
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
    public func delay(afterFailures failures: Int, unit: Double) -> Duration {
        let (initial, maximum) = (initialDelay.timeInterval, maximumDelay.timeInterval)
        let growth = (0..<max(0, failures - 1)).reduce(initial) { delay, _ in min(delay * max(multiplier, 1), maximum) }
        let base = min(growth, maximum)
        let spread = max(0, min(jitter, 1))
        let jittered = base * (1 - spread + 2 * spread * min(max(unit, 0), 1))
        return .microseconds(Int64((max(0, jittered) * 1_000_000).rounded()))   // whole microseconds
    }
}

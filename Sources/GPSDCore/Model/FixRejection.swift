import GPSDSystem

/// Fixes kept coming, but none met a consumer's desired accuracy for as long as the manager's
/// ``LocationManager/staleTimeout``: what a consumer filtered to silence is told, once, until a fix passes again.
/// A delegate hears it through ``LocationManagerDelegate/locationManager(_:didRejectFixes:)``, a live timeline
/// as ``LocationUpdate/rejection``.
///
/// ```swift
/// print(rejection)   // no fix within 10 m for 8 s: the best was ±17.2 m
/// ```
public struct FixRejection: Sendable, Hashable, CustomStringConvertible {
    /// The horizontal accuracy asked for, in metres.
    public var desiredAccuracy: Double
    /// The most accurate fix rejected meanwhile (of unknown accuracy if none reported one).
    public var best: Location
    /// How long fixes have been rejected, on the monotonic clock.
    public var duration: Duration

    public init(desiredAccuracy: Double, best: Location, duration: Duration) {
        self.desiredAccuracy = desiredAccuracy
        self.best = best
        self.duration = duration
    }

    /// `no fix within 10 m for 8 s: the best was ±17.2 m`.
    public var description: String {
        let best = best.horizontalAccuracy.map { "±" + JSONText.fixed($0, digits: 1) + " m" } ?? "of unknown accuracy"
        return "no fix within \(JSONText.number(desiredAccuracy)) m for \(duration.secondsText): the best was \(best)"
    }
}

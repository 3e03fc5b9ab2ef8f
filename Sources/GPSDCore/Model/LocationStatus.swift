import GPSDSystem

/// Whether fixes are available, and if not why: what a robot's supervisor or a dashboard shows.
///
/// A ``LocationManager`` moves through these while something wants fixes, and tells its delegate
/// (``LocationManagerDelegate/locationManager(_:didChangeStatus:)``) and ``AsyncLocationManager/statusUpdates()``
/// of each change. They are transient conditions, not errors: a fatal failure is reported as a
/// ``LocationError`` (the delegate's `didFailWithError`, a stream's thrown error), and the status becomes
/// ``stopped``, which ``AsyncLocationManager/statusUpdates()`` tells (the delegate, told of the error, hears nothing more).
///
/// ```swift
/// for await status in gps.statusUpdates() {
///     if case .stale = status { robot.slowDown() }
/// }
/// ```
public enum LocationStatus: Sendable, Hashable, CustomStringConvertible {
    /// Connecting to gpsd (or opening a recording); `attempt` counts from 1 since a connection last proved good
    /// (it brought a fix, or held for 10 s).
    case connecting(attempt: Int)
    /// Connected and watching; gpsd's release once its banner has arrived.
    case connected(gpsdVersion: String?)
    /// gpsd has no receiver. It stays until a receiver reports: gpsd has nothing to say meanwhile, so this is
    /// never followed by ``stale(silentFor:)``.
    case noDevice
    /// A receiver reports, without a fix yet: the satellites it sees and uses, once it has said.
    case waitingForFix(satellites: SatelliteCount?)
    /// Fixes are coming: their dimension and how they were obtained. Told again when either changes.
    case fix(Location.Fix, Location.Status)
    /// The receiver had a fix and has lost it. Told once, until a fix returns.
    case fixLost
    /// gpsd says the receiver went away (a DEVICE report with `activated` 0): unplugged, say. It stays until a
    /// receiver reports again (gpsd's DEVICE with `activated` set, or a fix): the silence that follows is the
    /// receiver's absence, not news, and does not turn it into ``stale(silentFor:)``.
    case deviceGone(device: String?)
    /// No report at all for `silentFor` while a receiver is there: gpsd or the receiver has stopped talking.
    case stale(silentFor: Duration)
    /// The connection failed or could not be made (`because`); attempt `attempt` to connect comes after `after`
    /// (see ``ReconnectPolicy``).
    indirect case reconnecting(attempt: Int, after: Duration, because: LocationError)
    /// Nothing wants fixes, or a fatal error ended the watch.
    case stopped

    /// The case's name without its values, stable for logs and metrics: `connecting`, `connected`, `noDevice`,
    /// `waitingForFix`, `fix`, `fixLost`, `deviceGone`, `stale`, `reconnecting`, `stopped`.
    public var name: String { StatusKind(self).name }

    /// One line for people: `connecting (attempt 2)`, `fix 3D gps`, `reconnecting in 0.5 s (attempt 3): cannot connect to gpsd at localhost:2947: connection refused`, …
    public var description: String {
        switch self {
        case .connecting(let attempt): attempt == 1 ? "connecting" : "connecting (attempt \(attempt))"
        case .connected(let version): "connected" + (version.map { " to gpsd \($0)" } ?? "")
        case .noDevice: "gpsd has no receiver"
        case .waitingForFix(let satellites):
            "waiting for a fix" + (satellites.map { " (\($0.used) of \($0.visible) satellites used)" } ?? "")
        case .fix(let fix, let status): "fix \(fix.rawValue) \(status.rawValue)"
        case .fixLost: "fix lost"
        case .deviceGone(let device): "receiver gone" + (device.map { " (\($0))" } ?? "")
        case .stale(let silence): "no report for \(silence.secondsText)"
        case .reconnecting(let attempt, let delay, let error):
            "reconnecting in \(delay.secondsText) (attempt \(attempt)): \(error.message)"
        case .stopped: "stopped"
        }
    }
}

extension LocationStatus {
    /// Whether the session and its receiver are reporting: a heading held is current only then.
    package var isReporting: Bool {
        switch self {
        case .connected, .waitingForFix, .fix, .fixLost: true
        case .connecting, .noDevice, .deviceGone, .stale, .reconnecting, .stopped: false
        }
    }
}

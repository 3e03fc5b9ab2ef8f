/// How a ``LocationManager`` has fared since it was made: reconnections, fixes and their rate, the time spent in
/// each kind of ``LocationStatus``, what was not passed on, and how old the newest fix is. A value, read at once
/// and without a lock held past the read (`manager.health`, `gps.health`); the same counts go to swift-metrics
/// (`LocationManager.MetricsOptions`).
///
/// ```swift
/// let health = gps.health
/// print("reconnects: \(health.reconnects), fixes: \(health.fixes)")
/// if let rate = health.fixesPerSecond { print("fixes a second: \(rate)") }
/// print("time with a fix: \(health.timeInStatus.fix)")
/// if let age = health.lastFixAge, age > .seconds(2) { print("the newest fix is \(age) old") }
/// ```
///
/// Times are by the manager's monotonic clock; none counts from before the manager was made.
public struct LocationHealth: Sendable, Hashable {
    /// The span ``fixesPerSecond`` is counted over: 10 seconds.
    public static let rateWindow: Duration = .seconds(10)

    /// How many times a connection to gpsd was lost (dropped, or stalled past its timeout) while fixes were wanted,
    /// and the manager set out to reconnect: once an outage, however many attempts it took (the refused attempts
    /// while gpsd is down are not counted again), as a fleet counts link losses. A first connection refused is no
    /// reconnection.
    public var reconnects: Int
    /// How many fixes the manager received: one per receiver epoch (a later report of the same epoch that adds a
    /// value is not counted again), the fix gpsd held at a connection not counted. Counted whatever the filters.
    public var fixes: Int
    /// Fixes a second over the ``rateWindow`` of whole seconds before the current one, by the manager's clock;
    /// `nil` until the manager has run that long.
    public var fixesPerSecond: Double?
    /// How long the manager has spent in each kind of status, the current one up to the read.
    public var timeInStatus: StatusDurations
    /// What was not passed on, and why: lines skipped, fixes and values rejected (the manager's
    /// ``LocationManager/statistics``).
    public var statistics: ReportStatistics
    /// How long ago the receiver measured the newest fix, as of the read (``Location/Arrival/delay`` and the
    /// time since it arrived); `nil` before the first fix, or when the fix's delay is not known.
    public var lastFixAge: Duration?
    /// Elements the buffers of this manager's streams dropped because their consumers had not taken them in time (a
    /// live gpsd's `updates()`, `liveUpdates()` and `headingUpdates()`, by default those that waited more than 2 s
    /// beyond the newest 16, or beyond 1024), and the fixes, headings and views its delegate's backlog dropped the
    /// same way; a replay waits for its consumers instead, and drops nothing.
    public var streamDrops: Int

    /// What was dropped in all: fixes rejected (``ReportStatistics/rejectedFixes``), lines skipped
    /// (``ReportStatistics/skippedLines``) and elements the streams' buffers dropped (``streamDrops``).
    public var drops: Int { statistics.rejectedFixes + statistics.skippedLines + streamDrops }

    package init(
        reconnects: Int, fixes: Int, fixesPerSecond: Double?, timeInStatus: StatusDurations,
        statistics: ReportStatistics, lastFixAge: Duration?, streamDrops: Int
    ) {
        self.reconnects = reconnects
        self.fixes = fixes
        self.fixesPerSecond = fixesPerSecond
        self.timeInStatus = timeInStatus
        self.statistics = statistics
        self.lastFixAge = lastFixAge
        self.streamDrops = streamDrops
    }
}

/// A duration for each kind of ``LocationStatus`` (its ``LocationStatus/name``), whatever its values: a
/// `.fix(.threeDimensional, .gps)` and a `.fix(.twoDimensional, .dgps)` are both ``fix``.
///
/// ```swift
/// let times = manager.health.timeInStatus
/// print(times.fix, times.reconnecting, times[manager.status])
/// ```
public struct StatusDurations: Sendable, Hashable {
    public var connecting = Duration.zero
    public var connected = Duration.zero
    public var noDevice = Duration.zero
    public var waitingForFix = Duration.zero
    public var fix = Duration.zero
    public var fixLost = Duration.zero
    public var deviceGone = Duration.zero
    public var stale = Duration.zero
    public var reconnecting = Duration.zero
    public var stopped = Duration.zero

    public init() {}

    /// The duration of `status`'s kind.
    public subscript(status: LocationStatus) -> Duration {
        get { self[StatusKind(status)] }
        set { self[StatusKind(status)] = newValue }
    }

    /// All of them together.
    public var total: Duration {
        connecting + connected + noDevice + waitingForFix + fix + fixLost + deviceGone + stale + reconnecting + stopped
    }

    package subscript(kind: StatusKind) -> Duration {
        get {
            switch kind {
            case .connecting: connecting
            case .connected: connected
            case .noDevice: noDevice
            case .waitingForFix: waitingForFix
            case .fix: fix
            case .fixLost: fixLost
            case .deviceGone: deviceGone
            case .stale: stale
            case .reconnecting: reconnecting
            case .stopped: stopped
            }
        }
        set {
            switch kind {
            case .connecting: connecting = newValue
            case .connected: connected = newValue
            case .noDevice: noDevice = newValue
            case .waitingForFix: waitingForFix = newValue
            case .fix: fix = newValue
            case .fixLost: fixLost = newValue
            case .deviceGone: deviceGone = newValue
            case .stale: stale = newValue
            case .reconnecting: reconnecting = newValue
            case .stopped: stopped = newValue
            }
        }
    }
}

/// A ``LocationStatus``'s kind, without its values: what health times and metrics count by.
package enum StatusKind: Int, Sendable, Hashable {
    case connecting, connected, noDevice, waitingForFix, fix, fixLost, deviceGone, stale, reconnecting, stopped

    /// Every kind, in order (a stored array: `CaseIterable`'s is made afresh at each use).
    package static let all: [StatusKind] = [
        .connecting, .connected, .noDevice, .waitingForFix, .fix, .fixLost, .deviceGone, .stale, .reconnecting, .stopped,
    ]

    package init(_ status: LocationStatus) {
        self = switch status {
        case .connecting: .connecting
        case .connected: .connected
        case .noDevice: .noDevice
        case .waitingForFix: .waitingForFix
        case .fix: .fix
        case .fixLost: .fixLost
        case .deviceGone: .deviceGone
        case .stale: .stale
        case .reconnecting: .reconnecting
        case .stopped: .stopped
        }
    }

    /// ``LocationStatus/name``'s text for this kind.
    package var name: String {
        switch self {
        case .connecting: "connecting"
        case .connected: "connected"
        case .noDevice: "noDevice"
        case .waitingForFix: "waitingForFix"
        case .fix: "fix"
        case .fixLost: "fixLost"
        case .deviceGone: "deviceGone"
        case .stale: "stale"
        case .reconnecting: "reconnecting"
        case .stopped: "stopped"
        }
    }
}

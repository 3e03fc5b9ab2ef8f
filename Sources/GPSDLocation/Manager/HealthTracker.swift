import FoundationEssentials
import GPSDCore

/// The counts behind ``LocationHealth``, kept by the state machine: reconnections and fixes as they are decided, the
/// time in each kind of status, and the fix rate. What the metrics have not been told yet waits in ``pending``,
/// which ``ManagerStorage`` takes under the lock and records after releasing it. Nothing here allocates once made.
struct HealthTracker {
    private(set) var reconnects = 0
    private(set) var fixes = 0
    /// The kind of status being timed, since ``since``.
    private var kind = StatusKind.stopped
    private var since: Duration = .zero
    /// When the tracker began: the fix rate is known one window after it.
    private var began: Duration = .zero
    /// The time of each kind up to ``since``.
    private var settled = StatusDurations()
    /// The kind announced last: a reconnection is counted once an outage, not once an attempt.
    private var lastAnnounced = StatusKind.stopped
    /// A kind announced and not yet timed: it is timed from the next ``settle(at:)``, the instant of its decision.
    private var announced: StatusKind?
    /// The newest fix counted: a later report of its epoch is not counted again.
    private var lastCounted: (time: Date, device: String?)?
    private var rate = FixRate()
    /// The statistics the metrics were told of.
    private var toldStatistics = ReportStatistics()
    /// How many times the kind of status changed: the metrics set the status of the newest change only.
    private var statusChanges = 0
    /// What the metrics have not been told.
    var pending = Changes()

    /// What happened since the metrics were last told.
    struct Changes {
        var fixes = 0
        var reconnects = 0
        /// Time to add to each kind of status.
        var seconds = StatusDurations()
        /// The kind of status now, when it changed, and the number of that change.
        var status: (kind: StatusKind, change: Int)?
        /// The newest counted fix's measurement, on the wall clock.
        var lastFixMeasured: Date?
        /// The newest fix's age, as of the decision.
        var lastFixAge: Duration?
        /// How much each of the statistics grew.
        var statistics: ReportStatistics?

        var isEmpty: Bool {
            fixes == 0 && reconnects == 0 && seconds == StatusDurations() && status == nil && lastFixMeasured == nil
                && lastFixAge == nil && statistics == nil
        }
    }

    /// Starts timing at `now` (the manager's making), in the stopped status.
    mutating func begin(at now: Duration) {
        since = now
        began = now
        pending.status = (kind, statusChanges)
    }

    /// A status was announced: a connection lost is counted (its retries, each `connecting` then `reconnecting`
    /// again, are not); its time begins at the next ``settle(at:)``.
    mutating func announced(_ status: LocationStatus) {
        let new = StatusKind(status)
        if new == .reconnecting, lastAnnounced != .connecting, lastAnnounced != .reconnecting {
            reconnects += 1
            pending.reconnects += 1
        }
        lastAnnounced = new
        announced = new
    }

    /// Whether a status was announced and not yet timed.
    var awaitsTime: Bool { announced != nil }

    /// A fix was accepted at `now`: counted unless its epoch was.
    mutating func accepted(_ location: Location, at now: Duration) {
        if let last = lastCounted, last.time == location.timestamp, last.device == location.device { return }
        lastCounted = (location.timestamp, location.device)
        fixes += 1
        pending.fixes += 1
        rate.count(at: now)
        if let arrival = location.arrival, let delay = arrival.delay {
            pending.lastFixMeasured = arrival.date.addingTimeInterval(-delay.timeInterval)
        }
    }

    /// Adds the time up to `now` to the kind being timed, whose time then goes on from `now`, or the announced one's.
    mutating func settle(at now: Duration) {
        if now > since {
            settled[kind] += now - since
            pending.seconds[kind] += now - since
            since = now
        }
        if let announced {
            if announced != kind {
                statusChanges += 1
                pending.status = (announced, statusChanges)
            }
            kind = announced
            self.announced = nil
        }
    }

    /// The statistics as of a decision: how much they grew since the metrics were last told goes to them.
    mutating func note(_ statistics: ReportStatistics) {
        guard statistics != toldStatistics else { return }
        let told = toldStatistics
        var grown = ReportStatistics()
        grown.skippedLines = statistics.skippedLines - told.skippedLines
        grown.rejectedFixes = statistics.rejectedFixes - told.rejectedFixes
        grown.rejectedValues = statistics.rejectedValues - told.rejectedValues
        grown.fixesWithoutTime = statistics.fixesWithoutTime - told.fixesWithoutTime
        grown.truncatedSkies = statistics.truncatedSkies - told.truncatedSkies
        pending.statistics = grown
        toldStatistics = statistics
    }

    /// The value as of `now` (not before the last settle), with the newest fix's measurement time (monotonic).
    func health(
        at now: Duration, lastFixMeasured: Duration?, statistics: ReportStatistics, streamDrops: Int
    ) -> LocationHealth {
        let now = max(now, since)
        var times = settled
        times[kind] += now - since
        return LocationHealth(
            reconnects: reconnects, fixes: fixes, fixesPerSecond: rate.perSecond(at: now, began: began),
            timeInStatus: times, statistics: statistics, lastFixAge: lastFixMeasured.map { max(.zero, now - $0) },
            streamDrops: streamDrops)
    }

    /// Takes what the metrics have not been told.
    mutating func takePending() -> Changes? {
        guard !pending.isEmpty else { return nil }
        defer { pending = Changes() }
        return pending
    }
}

/// Fixes counted by whole second of the monotonic clock, in a ring of one window and the current second: made once,
/// so counting allocates nothing.
struct FixRate {
    static let window = Int64(LocationHealth.rateWindow.components.seconds)
    private var seconds = [Int64](repeating: .min, count: Int(FixRate.window) + 1)
    private var counts = [Int](repeating: 0, count: Int(FixRate.window) + 1)

    mutating func count(at now: Duration) {
        let second = now.components.seconds
        let slot = Int(second.magnitude % UInt64(seconds.count))
        if seconds[slot] != second {
            seconds[slot] = second
            counts[slot] = 0
        }
        counts[slot] += 1
    }

    /// Fixes a second over the window's whole seconds before `now`'s; `nil` unless the counting `began` before them.
    func perSecond(at now: Duration, began: Duration) -> Double? {
        let current = now.components.seconds
        guard began <= .seconds(current - Self.window) else { return nil }
        var total = 0
        for slot in seconds.indices where seconds[slot] >= current - Self.window && seconds[slot] < current {
            total += counts[slot]
        }
        return Double(total) / Double(Self.window)
    }
}

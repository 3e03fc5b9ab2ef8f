import FoundationEssentials

/// Paces a replay by the recorded fix times against a monotonic clock (a `Duration` since a fixed origin).
struct ReplayPacer {
    /// Recorded seconds per real second; `nil` for as fast as possible.
    let speed: Double?
    private var origin: (recorded: Date, real: Duration)?
    private var last: Date?

    init(pace: ReplayPace) { self.speed = pace.speed }

    /// How long to wait before handing `report` on, at monotonic time `now`; `nil` for no wait.
    mutating func delay(before report: GPSDReport, now: Duration) -> Duration? {
        guard let speed, let time = report.time else { return nil }
        // A jump backwards (a looped log, a week-rollover guess) or a gap over an hour starts a new origin.
        if let last, time < last || time.timeIntervalSince(last) > 3600 { origin = nil }
        last = time
        guard let origin else {
            self.origin = (time, now)
            return nil
        }
        // A pace slow enough (`.accelerated(by: 1e-30)`) puts the next report past any clock: it waits for ever.
        let seconds = time.timeIntervalSince(origin.recorded) / speed
        guard seconds < Duration.never.timeInterval else { return .never }
        let target = origin.real + .seconds(seconds)
        return target > now ? target - now : nil
    }
}

extension GPSDReport {
    /// The fix time of a TPV, with or without a fix.
    var time: Date? {
        switch self {
        case .fix(let location): location.timestamp
        case .noFix(_, let time): time
        default: nil
        }
    }
}

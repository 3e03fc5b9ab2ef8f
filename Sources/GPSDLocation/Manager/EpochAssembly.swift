import FoundationEssentials
import GPSDCore

/// What the reports of the current sessions add up to: one fix per receiver epoch (``EpochCoalescer``), each
/// completed by its epoch's GST, the newest fix and satellite count, and the statistics of what was not passed
/// on. A value: each input returns what it causes, and ``LocationManagerStateMachine`` hands a fix it passes on
/// to the ``SubscriptionTable``.
struct EpochAssembly {
    /// Receivers kept apart at most (gpsd serves four unless built for more): a peer that names a new one in every
    /// report would otherwise grow what is kept of each without end, and the work of each fix with it.
    static let maximumReceivers = 64

    private(set) var coalescer = EpochCoalescer()
    /// The newest GST (1-sigma errors) of each receiver, by device, with the epoch it belongs to.
    private var deviations: [String: (deviation: Location.Deviation, time: Date)] = [:]
    /// The newest fix each receiver reported live (not a POLL reply's), by device: what its epoch's GST completes.
    private var newestLiveFix: [String: Location] = [:]
    /// The newest fix and the monotonic time it was current.
    private(set) var latest: (location: Location, at: Duration)?
    private(set) var satellites: SatelliteCount?
    private(set) var statistics = ReportStatistics()
    private var loggedProblems: Set<ReportProblem.Kind> = []

    /// What became of a fix.
    enum OnFix {
        /// It has no time (a receiver's first report of a session, before it knows the date): held back, counted.
        case withoutTime
        /// A held fix older than the newest one: dropped.
        case older
        /// It adds nothing to its epoch's fix already passed on.
        case repeated
        /// Passed on, with its arrival set. If a receiver was forgotten to make room for this one's, `forgotten`
        /// names it: its held epochs are over.
        case accepted(Location, forgotten: String?)
    }

    /// A fresh start (no session was wanted before): what a reconnection keeps, so that a fix sent again is not
    /// passed on twice, is forgotten.
    mutating func startAfresh() {
        coalescer.reset()
        deviations.removeAll()
        newestLiveFix.removeAll()
    }

    /// A fix of the current session: `age` is nil for one the receiver just reported, and gpsd's estimate of
    /// its age for one from a POLL reply (its held fix); it arrived at monotonic time `now`, as `arrival` says.
    mutating func assemble(
        _ reported: Location, age: Duration?, now: Duration, arrival: Location.Arrival
    ) -> OnFix {
        guard reported.timestamp != nil else {
            statistics.fixesWithoutTime += 1
            return .withoutTime
        }
        let current = now - (age ?? .zero)
        if let latest, latest.at > current { return .older }
        let forgotten = coalescer.knows(reported.device) ? nil : makeRoomForAReceiver()   // before it is counted
        var location = reported
        if location.deviation == nil, let known = deviations[location.device ?? ""], known.time == location.timestamp {
            location.deviation = known.deviation   // the epoch's GST came first
        }
        guard coalescer.accept(location) else {
            assert(forgotten == nil, "the first fix of a receiver is always passed on")
            return .repeated
        }
        let heldFor = age ?? .zero
        location.arrival = Location.Arrival(
            instant: arrival.instant.advanced(by: .zero - heldFor), date: arrival.date.addingTimeInterval(-heldFor.timeInterval))
        latest = (location, current)
        if age == nil { newestLiveFix[location.device ?? ""] = location }
        return .accepted(location, forgotten: forgotten)
    }

    /// A GST of `device`'s epoch at `time`. One that comes after its epoch's TPV completes that receiver's live
    /// fix: returned, to be assembled again as a later TPV of the epoch would be, with the time it first arrived.
    mutating func deviation(
        _ deviation: Location.Deviation, device: String?, time: Date
    ) -> (completed: Location, arrival: Location.Arrival)? {
        if deviations[device ?? ""] == nil, deviations.count >= Self.maximumReceivers {
            deviations.remove(at: deviations.startIndex)   // one receiver's, to bound them
        }
        deviations[device ?? ""] = (deviation, time)
        guard var completed = newestLiveFix[device ?? ""], completed.deviation == nil, completed.timestamp == time,
              let firstArrival = completed.arrival else { return nil }
        completed.deviation = deviation
        completed.arrival = nil
        return (completed, firstArrival)
    }

    /// A SKY report's counts.
    mutating func sky(_ count: SatelliteCount) {
        satellites = count
    }

    /// A value that cannot be true: counted. Returns whether it is the first of its kind (to be logged).
    mutating func reject(_ problem: ReportProblem) -> Bool {
        if problem.dropsFix { statistics.rejectedFixes += 1 } else { statistics.rejectedValues += 1 }
        return loggedProblems.insert(problem.kind).inserted
    }

    /// A line that was not a report.
    mutating func skippedLine() {
        statistics.skippedLines += 1
    }

    /// When as many as ``maximumReceivers`` are kept, the one first seen is forgotten, and named.
    private mutating func makeRoomForAReceiver() -> String? {
        guard coalescer.receiverCount >= Self.maximumReceivers, let oldest = coalescer.oldestReceiver else { return nil }
        coalescer.forget(oldest)
        newestLiveFix[oldest] = nil
        deviations[oldest] = nil
        return oldest
    }

    /// How old a fix from a POLL reply was, by gpsd's clock: the poll's time minus the fix's. Only when the
    /// two are plausibly on the same clock (0 to 1 day apart); a replayed log's fix times can be years off,
    /// and then gpsd holding the fix is the best freshness we know.
    static func age(of location: Location, polledAt time: Date?) -> Duration {
        guard let time, let fixTime = location.timestamp else { return .zero }
        let seconds = time.timeIntervalSince(fixTime)
        return (0...86_400).contains(seconds) ? .seconds(seconds) : .zero
    }
}

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
    /// When each receiver's epoch is complete, by the number of reports its epochs bring.
    private var ends = EpochEnds()
    /// The newest GST (1-sigma errors) of each receiver, by device, with the epoch it belongs to.
    private var deviations: [String: (deviation: Location.Deviation, time: Date)] = [:]
    /// The newest fix each receiver reported live (not a POLL reply's), by device: what its epoch's GST completes.
    private var newestLiveFix: [String: Location] = [:]
    /// The newest fix, and the monotonic time the receiver measured it, when that is known.
    private(set) var latest: (location: Location, measured: Duration?)?
    /// Each receiver's relation of its time to the monotonic clock, by device: what ages are estimated by.
    private var clocks: [String: ReceiverClockFilter] = [:]
    /// Each receiver's satellites, an epoch's SKYs made one view.
    private var skies = SkyEpochs()
    /// The newest whole view of a receiver's satellites passed on.
    var sky: SkyView? { skies.newest }
    /// The counts of ``sky``.
    var satellites: SatelliteCount? { sky?.count }
    private(set) var statistics = ReportStatistics()
    private var loggedProblems: Set<ReportProblem.Kind> = []

    /// Where a fix comes from.
    enum Origin: Equatable {
        /// The receiver just reported it.
        case live
        /// A POLL reply, gpsd's time of the poll with it: gpsd held the fix, for however long.
        case held(polledAt: Date?)
        /// A live fix, completed by its epoch's GST that came after it: its arrival is the fix's.
        case completed

        var isHeld: Bool { if case .held = self { true } else { false } }
    }

    /// What became of a fix.
    enum OnFix {
        /// A held fix older than the newest one: dropped.
        case older
        /// It adds nothing to its epoch's fix already passed on; whether its report completes the epoch
        /// (``EpochEnds``).
        case repeated(completesEpoch: Bool)
        /// Passed on, with its arrival set, and whether its report completes the epoch (``EpochEnds``). If a
        /// receiver was forgotten to make room for this one's, `forgotten` names it: its held epochs are over.
        case accepted(Location, forgotten: String?, completesEpoch: Bool)
    }

    /// A fresh start (no session was wanted before): what a reconnection keeps, so that a fix sent again is not
    /// passed on twice, is forgotten.
    mutating func startAfresh() {
        coalescer.reset()
        ends.reset()
        skies.reset()
        clocks.removeAll()
        deviations.removeAll()
        newestLiveFix.removeAll()
    }

    /// A fix of the current session, from `origin`, that arrived at monotonic time `now`, as `arrival` says
    /// (the first arrival, for a fix ``Origin/completed`` by its GST). Its arrival is set, with how long before
    /// it the receiver measured it (``ReceiverClockFilter``): for a held fix, by the receiver's live fixes, or
    /// else by gpsd's clock (``heldDelay(of:polledAt:)``), or not at all.
    mutating func assemble(_ reported: Location, origin: Origin, now: Duration, arrival: Location.Arrival) -> OnFix {
        let key = reported.device ?? ""
        var delay: Duration?
        switch origin {
        case .live: break   // once it is accepted: an earlier record of an epoch passed on tells nothing of the clock
        case .completed: delay = arrival.delay
        case .held(let time):
            delay = clocks[key]?.delay(ofHeldFixAt: reported.timestamp, arrivedAt: now)
                ?? Self.heldDelay(of: reported, polledAt: time)
            // A held fix is passed on only if it is newer than the newest, as far as anyone can tell.
            if let latest, latest.location.device == reported.device,
               latest.location.timestamp >= reported.timestamp { return .older }
            if let latest, let measured = latest.measured, delay.map({ now - $0 < measured }) ?? true {
                return .older
            }
        }
        let forgotten = coalescer.knows(reported.device) ? nil : makeRoomForAReceiver()   // before it is counted
        // A live report counts towards its epoch's end; a record its GST completed was counted as the GST.
        let completesEpoch = origin == .live && ends.report(device: reported.device, time: reported.timestamp)
        var location = reported
        if location.deviation == nil, let known = deviations[key], known.time == location.timestamp {
            location.deviation = known.deviation   // the epoch's GST came first
        }
        guard coalescer.accept(location) else {
            assert(forgotten == nil, "the first fix of a receiver is always passed on")
            return .repeated(completesEpoch: completesEpoch)
        }
        if origin == .live {
            delay = clocks[key, default: ReceiverClockFilter()].delay(ofLiveFixAt: location.timestamp, arrivedAt: now)
            // A later report of the epoch passed on last was measured when its first was, to the attosecond: its
            // age goes on from the first's, and a prediction from it does not step back.
            if let first = newestLiveFix[key], first.timestamp == location.timestamp,
               let measured = first.arrival?.measured, measured <= arrival.instant {
                delay = measured.duration(to: arrival.instant)
            }
        }
        location.arrival = Location.Arrival(instant: arrival.instant, date: arrival.date, delay: delay)
        latest = (location, delay.map { now - $0 })
        switch origin {
        case .held: break
        case .live, .completed: newestLiveFix[key] = location
        }
        return .accepted(location, forgotten: forgotten, completesEpoch: completesEpoch)
    }

    /// How long before `now` a heading of `device`'s, of its own receiver time `time`, was measured, by the
    /// relation of that receiver's clock to the monotonic clock its live fixes taught (a heading teaches it
    /// nothing); `nil` without a time, or before any live fix of the receiver.
    func delay(ofHeadingAt time: Date?, device: String?, now: Duration) -> Duration? {
        guard let time else { return nil }
        return clocks[device ?? ""]?.delay(ofHeldFixAt: time, arrivedAt: now)
    }

    /// A GST of `device`'s epoch at `time`: whether it completes its epoch (``EpochEnds``), and, if it comes after
    /// its epoch's TPV, that receiver's live fix it completes, to be assembled again as a later TPV of the epoch
    /// would be, with the time it first arrived.
    mutating func deviation(
        _ deviation: Location.Deviation, device: String?, time: Date
    ) -> (completesEpoch: Bool, fix: (completed: Location, arrival: Location.Arrival)?) {
        let completesEpoch = ends.report(device: device, time: time)
        return (completesEpoch, complete(with: deviation, device: device, time: time))
    }

    private mutating func complete(
        with deviation: Location.Deviation, device: String?, time: Date
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

    /// A fix without a time: held back, counted.
    mutating func fixWithoutTime() {
        statistics.fixesWithoutTime += 1
    }

    /// A SKY report: what it completes (``SkyEpochs``).
    mutating func sky(_ view: SkyView, listed: Bool) -> SkyEpochs.OnSky {
        skies.sky(view, listed: listed)
    }

    /// A TPV live from a receiver (a fix or not): the sky epoch it ends, and whether the receiver lost its fix
    /// (``SkyEpochs/fix(device:time:isFix:)``).
    mutating func skyEpoch(device: String?, time: Date?, isFix: Bool) -> SkyEpochs.OnFix {
        skies.fix(device: device, time: time, isFix: isFix)
    }

    /// A recording ended: the sky epochs under way, complete since none of them can grow.
    mutating func finishSkyEpochs() -> [SkyView] {
        skies.finish()
    }

    /// The receiver at `device` lost its fix (`nil`: every receiver): its satellites are no longer true. Returns
    /// whether any were known.
    mutating func forgetSatellites(of device: String?) -> Bool {
        skies.clear(device: device)
    }

    /// The receiver at `device` went (`nil`: every receiver): its satellites are no longer true, and what was learned
    /// of its sky epochs is forgotten (``SkyEpochs/gone(device:)``). Returns whether any were known.
    mutating func receiverGone(_ device: String?) -> Bool {
        skies.gone(device: device)
    }

    /// The session ended: its satellites are no longer true.
    mutating func forgetSatellites() {
        skies.sessionEnded()
    }

    /// A value that cannot be true, or a SKY too long for libgps: counted. Returns whether it is the first of its
    /// kind (to be logged).
    mutating func reject(_ problem: ReportProblem) -> Bool {
        if problem.kind == .truncatedSky {
            statistics.truncatedSkies += 1
        } else if problem.dropsFix {
            statistics.rejectedFixes += 1
        } else {
            statistics.rejectedValues += 1
        }
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
        ends.forget(oldest)
        clocks[oldest] = nil
        newestLiveFix[oldest] = nil
        deviations[oldest] = nil
        return oldest
    }

    /// How old a fix from a POLL reply was by gpsd's clock, when nothing better tells: the poll's time minus
    /// the fix's, if the two are plausibly on the same clock (the fix at most a second ahead, at most a day
    /// behind); otherwise `nil`, unknown. A replayed log's times can be years off, and so can the clock of a
    /// computer without a real-time clock: a fix whose age is unknown is not fresh.
    static func heldDelay(of location: Location, polledAt time: Date?) -> Duration? {
        guard let time else { return nil }
        let seconds = time.timeIntervalSince(location.timestamp)
        guard (-1...86_400).contains(seconds) else { return nil }
        return .seconds(max(0, seconds))
    }
}

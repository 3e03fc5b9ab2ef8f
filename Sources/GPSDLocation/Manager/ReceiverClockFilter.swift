import FoundationEssentials
import GPSDCore

/// How long before its arrival a receiver measured each fix: the estimate behind ``Location/age``.
///
/// A fix carries the receiver's time, and its arrival has a monotonic time; their difference, the *offset*, is
/// the distance between the two clocks plus whatever held the fix on its way (the serial line, gpsd, a gpsd that
/// stalled, this process). The distance itself changes at the rate the receiver's clock runs against the
/// monotonic clock: a real receiver's by its drift (parts per million), a simulator's or a replay's by whatever
/// pace it keeps, 20 % slow, say. So the filter learns a line, offset against receiver time, from the
/// least-delayed fixes of the recent ones, as NTP's clock filter (RFC 5905 §10) takes the least-delayed sample and
/// chrony's regression (`regress.c`) fits the rate too; each fix's delay is how far its offset lies above the
/// line. The wall clock plays no part: a system clock years off (a computer without a real-time clock, before
/// NTP) changes nothing.
///
/// The line is the *lower edge* of the evidence, never a fit through it: a delay only ever adds to an offset, so
/// the fixes that came with no delay lie lowest. The evidence is the least-delayed fix of each ``bucketWidth``
/// of receiver time over the last ``window`` of it (by the line so far), the fix before the newest, and the fix
/// just arrived. Their lower convex hull is a chain of lines, each under every point; the filter takes the one
/// under the centre of the evidence before the fix just arrived (all of it, the fix before included, whichever
/// bucket the new fix falls in or replaces): of all the lines under every point, the one highest on average over
/// the evidence, as a linear program would choose it. In finding that centre, each stretch between two fixes weighs
/// its receiver time, less as its fixes arrived faster or slower than one monotonic second a receiver second, so
/// a backlog's fixes, which gpsd sends in one burst after a stall, weigh almost nothing, nor does the stretch
/// across the stall. A backlog lies above the line before it (each of its fixes arrived later than its time
/// says), so it cannot bend the line, and each fix of it gets its own delay, however the fixes were bunched.
/// The estimate does not depend on the clock's rate: shearing all the offsets by a rate changes neither which
/// fixes lie lowest nor the weights.
///
/// Limits:
/// - The delay counts from when the fix would have arrived with the least delay seen, not from the instant the
///   receiver measured it: the receiver's computation and its serial line's constant latency are not counted.
/// - The rate needs evidence: until the window holds fixes of two buckets before the one just arrived, the line
///   has the rate learned before (at first, the monotonic clock's own), through the lowest point. So a backlog
///   can be told from a slower clock only once two fixes came before it; with one, its fixes are judged against
///   it at the rate learned before.
/// - A rate the line would give beyond ``plausibleRates`` (a burst's fixes, all arriving at once, with nothing
///   older left in the window) is not believed: the rate learned before is kept.
/// - A backlog longer than the window loses the evidence from before it, and its later fixes seem younger.
/// - A receiver whose time steps back (a replay starting over, a receiver's glitch) starts the estimate afresh:
///   its first fix afterwards counts as undelayed. The rate learned is kept, as the same clock's. If its first
///   fixes afterwards came late, the line drawn through them takes a second or so to straighten.
/// - Fixes from gpsd's POLL reply (held, of unknown delay) are judged by it but teach it nothing.
///
/// A value, one per receiver: ``EpochAssembly`` keeps them. The work per fix is a pass over the buckets, without
/// allocating once they have grown to the window.
struct ReceiverClockFilter: Equatable {
    /// How much receiver time the evidence spans: 32 s.
    static let window = 32.0
    /// Each bucket keeps the least-delayed fix of 1 s of receiver time: the evidence is at most 33 points.
    static let bucketWidth = 1.0
    /// Monotonic seconds a receiver second can take: a simulator 8 times faster than real time, or 20 times slower,
    /// at most. A line outside it is not a clock's: the edge from a burst's last fix to the first live one, say.
    static let plausibleRates = (1.0 / 8)...20

    /// A fix as evidence: its receiver time, in seconds since 1970, and its offset, arrival monotonic seconds
    /// minus receiver seconds.
    struct Point: Equatable {
        var time: Double
        var offset: Double
    }

    /// The least-delayed fix of one bucket of receiver time, by the line when it came.
    struct Bucket: Equatable {
        var index: Int64
        var point: Point
    }

    /// The offset an undelayed fix has at each receiver time: `offset` at `time`, changing by `slope` a receiver
    /// second (the receiver clock's rate against the monotonic clock, minus one).
    struct Line: Equatable {
        var time: Double
        var offset: Double
        var slope: Double

        func offset(at time: Double) -> Double { offset + slope * (time - self.time) }
        /// Monotonic seconds a receiver second takes.
        var rate: Double { 1 + slope }
    }

    /// The buckets of the window, oldest first.
    private(set) var buckets: [Bucket] = []
    /// The newest fix's point: the first report of the newest receiver time.
    private var newest: Point?
    /// The offset an undelayed fix has at the newest receiver time, by the line its first report was judged by:
    /// what every later report of that time is judged by.
    private var newestUndelayed: Double?
    /// The estimate after the newest live fix; `nil` before the first (or since the time stepped back).
    private(set) var line: Line?
    /// The slope learned: what a line is drawn with when the evidence cannot give one.
    private var slope = 0.0

    /// A fix the receiver just reported, of receiver time `time`, that arrived at monotonic time `arrival`:
    /// learns from it, and returns how long before arriving it was measured (zero for the least delayed).
    ///
    /// A later report of the newest receiver time (gpsd sends a TPV for each sentence of an epoch that adds to
    /// the fix: an RMC's, then a GGA's) is judged by the line its first report was, and teaches nothing: it
    /// arrived later than the first, so it is no better evidence, and judging it by a line refitted since would
    /// give one epoch two instants of measurement.
    mutating func delay(ofLiveFixAt time: Date, arrivedAt arrival: Duration) -> Duration {
        let fix = Point(time: time.timeIntervalSince1970, offset: arrival.timeInterval - time.timeIntervalSince1970)
        if let newest, let newestUndelayed, fix.time == newest.time {
            return Self.seconds(fix.offset - newestUndelayed)
        }
        if let newest, fix.time < newest.time {   // the receiver's time stepped back
            buckets.removeAll(keepingCapacity: true)
            self.newest = nil
            line = nil
        }
        // The evidence before the fix: the buckets' points, and the previous fix where it is not one of them.
        let previous = newest.flatMap { newest in buckets.last.map { $0.point.time < newest.time } == true ? newest : nil }
        let estimate = (buckets.count >= 2 ? lowerEdge(previous: previous, fix: fix) : nil)
            ?? lowest(slope: slope, at: fix.time, previous: previous, fix: fix)
        learn(fix)
        newest = fix
        newestUndelayed = estimate.offset(at: fix.time)
        line = estimate
        slope = estimate.slope
        return Self.seconds(fix.offset - estimate.offset(at: fix.time))
    }

    /// Takes `fix` into its bucket if it is the least delayed of it by the line so far, and lets the buckets wholly
    /// older than the window go (the newest stays, whatever it holds).
    private mutating func learn(_ fix: Point) {
        let index = Int64((fix.time / Self.bucketWidth).rounded(.down))
        if let last = buckets.last, last.index == index {
            if fix.offset - last.point.offset < slope * (fix.time - last.point.time) { buckets[buckets.count - 1].point = fix }
        } else {
            buckets.append(Bucket(index: index, point: fix))
        }
        let oldestKept = Int64(((fix.time - Self.window) / Self.bucketWidth).rounded(.down))
        if let first = buckets.firstIndex(where: { $0.index >= oldestKept }), first > 0 {
            buckets.removeFirst(first)
        }
    }

    /// A fix gpsd held (from a POLL reply), of receiver time `time`, arriving at `arrival`: how long before arriving
    /// it was measured, by the evidence of the receiver's live fixes; `nil` when there is none (no live fix yet,
    /// or its time stepped back since).
    func delay(ofHeldFixAt time: Date, arrivedAt arrival: Duration) -> Duration? {
        let seconds = time.timeIntervalSince1970
        guard let line, let newest, seconds <= newest.time + Self.window else { return nil }
        return Self.seconds(arrival.timeInterval - seconds - line.offset(at: seconds))
    }

    /// The edge of the lower convex hull of the evidence before `fix` (the buckets' points, then `previous`) and
    /// `fix`, under the centre of the evidence before it, each stretch between two of its points weighed by how near
    /// its pace is to the monotonic clock's; `nil` when that centre has no weight, or the edge's rate is not
    /// plausible.
    private func lowerEdge(previous: Point?, fix: Point) -> Line? {
        let before = buckets.count + (previous == nil ? 0 : 1)
        func point(_ index: Int) -> Point { index < buckets.count ? buckets[index].point : previous! }
        // The centre: a stretch of receiver time weighs its length, less as its fixes arrived faster or slower
        // than one monotonic second a receiver second: a burst's fixes, which arrived at once, and the stretch
        // across a stall weigh almost nothing. Only their weights relative to each other count, so a clock of
        // any steady rate weighs its stretches alike.
        var weight = 0.0
        var moment = 0.0
        let base = point(0).time
        for index in 1..<before {
            let (start, end) = (point(index - 1), point(index))
            let span = end.time - start.time
            let pace = (end.offset - start.offset + span) / span   // monotonic seconds a receiver second
            guard pace > 0 else { continue }
            let stretch = span * min(pace, 1 / pace)
            weight += stretch
            moment += stretch * ((start.time + end.time) / 2 - base)
        }
        guard weight > 0 else { return nil }
        let centre = base + moment / weight
        return withUnsafeTemporaryAllocation(of: Point.self, capacity: before + 1) { hull -> Line? in
            // Andrew's monotone chain: the points come in order of time, each time once.
            var corners = 0
            func add(_ point: Point) {
                while corners >= 2, Self.turn(hull[corners - 2], hull[corners - 1], point) <= 0 { corners -= 1 }
                hull.initializeElement(at: corners, to: point)
                corners += 1
            }
            for index in 0..<before { add(point(index)) }
            add(fix)
            // The edge under the centre; at a corner, the older edge.
            var edge = 0
            while edge + 2 < corners, hull[edge + 1].time < centre { edge += 1 }
            let (start, end) = (hull[edge], hull[edge + 1])
            let line = Line(time: start.time, offset: start.offset,
                            slope: (end.offset - start.offset) / (end.time - start.time))
            return Self.plausibleRates.contains(line.rate) ? line : nil
        }
    }

    /// The line of `slope` under every point (the buckets', `previous` and `fix`), through the lowest: its offset
    /// at receiver time `time`.
    private func lowest(slope: Double, at time: Double, previous: Point?, fix: Point) -> Line {
        func offset(_ point: Point) -> Double { point.offset + slope * (time - point.time) }
        var lowest = min(offset(fix), previous.map(offset) ?? .infinity)
        for bucket in buckets { lowest = min(lowest, offset(bucket.point)) }
        return Line(time: time, offset: lowest, slope: slope)
    }

    /// Positive when `a`, `b`, `c` turn left (counterclockwise), zero when they are in line.
    private static func turn(_ a: Point, _ b: Point, _ c: Point) -> Double {
        (b.time - a.time) * (c.offset - a.offset) - (b.offset - a.offset) * (c.time - a.time)
    }

    /// A non-negative number of seconds as a duration; a difference of clocks this large never comes from a
    /// `Date` and a `Duration` both finite, but a duration is made only of a finite number.
    private static func seconds(_ value: Double) -> Duration {
        guard value.isFinite, value > 0 else { return .zero }
        return .seconds(min(value, Duration.never.timeInterval))
    }
}

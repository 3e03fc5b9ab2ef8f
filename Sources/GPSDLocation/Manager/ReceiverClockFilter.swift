import FoundationEssentials
import GPSDCore

/// How long before its arrival a receiver measured each fix: the estimate behind ``Location/age``.
///
/// A fix carries the receiver's time, and its arrival has a monotonic time; their difference, the *offset*, is
/// the distance between the two clocks plus whatever held the fix on its way (the serial line, gpsd, a gpsd that
/// stalled, this process). The least-delayed fix is the best evidence of the distance itself, as in NTP's clock
/// filter (RFC 5905 §10): the smallest offset of the recent fixes is taken as the offset of a fix that came with
/// no delay, and each fix's delay is its offset minus that one. So a backlog of fixes that arrives in one burst
/// after a stall gets each its own delay, however the fixes were bunched, and the wall clock plays no part: a
/// system clock years off (a computer without a real-time clock, before NTP) changes nothing.
///
/// Limits:
/// - The delay counts from when the fix would have arrived with the least delay seen, not from the instant the
///   receiver measured it: the receiver's computation and its serial line's constant latency are not counted.
/// - Recent means the last ``window`` of receiver time: a receiver clock that drifts against the monotonic clock
///   shifts the estimate by at most its drift over the window (32 s at 500 ppm, the most NTP slews: 16 ms).
///   A backlog longer than the window loses the evidence from before it, and its later fixes seem younger.
/// - A receiver whose time steps back (a replay starting over, a receiver's glitch) starts the estimate afresh:
///   its first fix afterwards counts as undelayed.
/// - Fixes from gpsd's POLL reply (held, of unknown delay) are judged by it but teach it nothing.
///
/// A value, one per receiver: ``EpochAssembly`` keeps them.
struct ReceiverClockFilter: Equatable {
    /// How much receiver time the evidence spans: 32 s.
    static let window = 32.0
    /// Each bucket keeps the smallest offset of 4 s of receiver time, so the evidence is a few numbers.
    static let bucketWidth = 4.0

    /// The smallest offset (arrival seconds minus receiver seconds) of each bucket of receiver time, oldest first.
    private(set) var buckets: [(bucket: Int64, offset: Double)] = []
    /// The newest receiver time seen, in seconds since 1970.
    private var newest: Double?

    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.newest == rhs.newest && lhs.buckets.elementsEqual(rhs.buckets) { $0 == $1 }
    }

    /// A fix the receiver just reported, of receiver time `time`, that arrived at monotonic time `arrival`:
    /// learns from it, and returns how long before arriving it was measured (zero for the least delayed).
    mutating func delay(ofLiveFixAt time: Date, arrivedAt arrival: Duration) -> Duration {
        let seconds = time.timeIntervalSince1970
        let offset = arrival.timeInterval - seconds
        if let newest, seconds < newest { buckets.removeAll() }   // the receiver's time stepped back
        newest = seconds
        let bucket = Int64((seconds / Self.bucketWidth).rounded(.down))
        if let last = buckets.last, last.bucket == bucket {
            buckets[buckets.count - 1].offset = min(last.offset, offset)
        } else {
            buckets.append((bucket, offset))
        }
        // Buckets wholly older than the window go; the newest stays whatever it holds.
        let oldestKept = Int64(((seconds - Self.window) / Self.bucketWidth).rounded(.down))
        if let first = buckets.firstIndex(where: { $0.bucket >= oldestKept }), first > 0 {
            buckets.removeFirst(first)
        }
        return Self.seconds(offset - smallestOffset!)
    }

    /// A fix gpsd held (from a POLL reply), of receiver time `time`, arriving at `arrival`: how long before arriving
    /// it was measured, by the evidence of the receiver's live fixes; `nil` when there is none (no live fix yet,
    /// or its time stepped back since).
    func delay(ofHeldFixAt time: Date, arrivedAt arrival: Duration) -> Duration? {
        guard let smallest = smallestOffset, let newest, time.timeIntervalSince1970 <= newest + Self.window else {
            return nil
        }
        return Self.seconds(arrival.timeInterval - time.timeIntervalSince1970 - smallest)
    }

    private var smallestOffset: Double? { buckets.lazy.map(\.offset).min() }

    /// A non-negative number of seconds as a duration; a difference of clocks this large never comes from a
    /// `Date` and a `Duration` both finite, but a duration is made only of a finite number.
    private static func seconds(_ value: Double) -> Duration {
        guard value.isFinite, value > 0 else { return .zero }
        return .seconds(min(value, Duration.never.timeInterval))
    }
}

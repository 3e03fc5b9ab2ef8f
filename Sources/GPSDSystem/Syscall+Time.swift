extension Syscall {
    /// poll(2)'s timeout for `duration`: whole milliseconds, rounded up so that a wake is never early; 0 for a
    /// duration that has passed; -1 (no limit) for nil or anything past about 24 days.
    public static func pollTimeout(_ duration: Duration?) -> Int32 {
        guard let duration else { return -1 }
        // Bounded before `components`, which traps beyond Int64.max seconds either way.
        guard duration > .zero else { return 0 }
        guard duration < .seconds(Int32.max / 1000) else { return -1 }
        let (seconds, attoseconds) = duration.components
        let whole = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        return Int32(whole + (attoseconds % 1_000_000_000_000_000 > 0 ? 1 : 0))
    }

    /// poll(2)'s timeout until `deadline` on the monotonic clock (nil: no limit), as ``pollTimeout(_:)``.
    public static func pollTimeout(until deadline: ContinuousClock.Instant?) -> Int32 {
        pollTimeout(deadline.map { ContinuousClock.now.duration(to: $0) })
    }
}

extension Duration {
    /// `0.25 s`, `8 s`, `-0.5 s`: seconds for people, to the millisecond (towards zero). A duration beyond
    /// 30,000 years either way, which no timer of ours takes, is written as a `Double`'s text: `1e+20 s`.
    public var secondsText: String {
        let limit = Duration.seconds(1_000_000_000_000)
        guard self < limit, self > .zero - limit else { return "\(self / .seconds(1)) s" }
        let milliseconds = components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
        let sign = milliseconds < 0 ? "-" : ""
        let (whole, fraction) = milliseconds.magnitude.quotientAndRemainder(dividingBy: 1000)
        guard fraction != 0 else { return "\(sign)\(whole) s" }
        var digits = String(fraction)
        digits = String(repeating: "0", count: 3 - digits.count) + digits
        while digits.hasSuffix("0") { digits.removeLast() }
        return "\(sign)\(whole).\(digits) s"
    }
}

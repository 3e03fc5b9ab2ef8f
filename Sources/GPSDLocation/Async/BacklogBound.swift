/// What a consumer that falls behind a live gpsd keeps by default, so that a reader that keeps up gets every
/// element, however many come at once, and one that does not still holds bounded memory. The default buffering of
/// every stream (``UpdateChannel/Limit/recent(_:)``) and of the delegate's backlog (``DelegateOutbox``).
///
/// A live gpsd cannot be held back (a replay is, and drops nothing), so the bound is on what waits, counted by the
/// time it has waited, between two watermarks, as swift-nio's `NIOAsyncSequenceProducerBackPressureStrategies`
/// sets a producer's demand between a low and a high one:
/// - the newest ``newest`` are kept whatever their age (the low mark: nothing `.bufferingNewest(16)` keeps is
///   dropped);
/// - beyond them, an element is kept until it has waited more than ``window`` without being taken, judged when a
///   newer one comes: a reader that takes each element within the window loses none, however large a burst (after a
///   stall, gpsd sends its backlog in one);
/// - never more than ``ceiling`` (the high mark, a hard bound on memory): beyond it the oldest go, whatever their age.
///
/// So a reader that never reads holds the newest 16 or what came in the last 2 seconds, whichever is more, and at
/// most 1024, what came just before it looks again.
package struct BacklogBound: Sendable, Hashable {
    /// The newest 16, and any that has waited 2 s or less, at most 1024: a burst of 1024 (102 s of a 10 Hz
    /// receiver's backlog) for a reader that keeps up; at 10 Hz, about 20 held for one that never reads.
    package static let `default` = BacklogBound(newest: 16, window: .seconds(2), ceiling: 1024)

    /// How many of the newest are kept whatever their age.
    package let newest: Int
    /// How long an element beyond the newest may wait untaken.
    package let window: Duration
    /// How many are kept at most.
    package let ceiling: Int

    package init(newest: Int, window: Duration, ceiling: Int) {
        precondition(newest >= 0 && ceiling >= max(newest, 1), "a ceiling of at least one, and of the newest kept")
        self.newest = newest
        self.window = window
        self.ceiling = ceiling
    }

    /// How many of the oldest of `count` waiting elements go at `now`: `arrival(i)` is when the `i`th oldest came,
    /// no earlier than the one before it (the times of one clock, the manager's).
    package func excess(count: Int, now: Duration, arrival: (Int) -> Duration) -> Int {
        var excess = max(0, count - ceiling)
        while excess < count - newest, now - arrival(excess) > window { excess += 1 }
        return excess
    }
}

/// Whether headings keep coming: a watchdog like the session's (``SessionStateMachine``'s), for headings alone.
/// Headings are *silent* once none has arrived for the manager's stale timeout, until the next one arrives; the
/// live timelines carry that as ``LocationUpdate/isHeadingStale``. One timer is pending at most: it is set by a
/// heading when none is, and when it fires early (headings kept coming) it is set again for the rest of the
/// timeout, so a heading sensor at 50 Hz costs no timer per heading. A value, changed only by its inputs.
struct HeadingWatch {
    /// When the newest heading arrived (monotonic), since the watch started.
    private(set) var lastArrival: Duration?
    /// Whether the timeout passed since ``lastArrival`` with no heading.
    private(set) var isSilent = false
    private var pending: Int?
    private var timers = 0

    /// A timer to set: ``fired(_:now:timeout:)`` is told its id after `after`.
    struct Timer: Equatable {
        var id: Int
        var after: Duration
    }

    /// What a heading arriving at `now` means: whether it ends a silence, and the timer to set, if any.
    mutating func arrived(at now: Duration, timeout: Duration) -> (endsSilence: Bool, timer: Timer?) {
        lastArrival = now
        let endsSilence = isSilent
        isSilent = false
        guard pending == nil, !timeout.meansNever else { return (endsSilence, nil) }
        return (endsSilence, newTimer(after: timeout))
    }

    /// What became of a timer that fired.
    enum OnFire: Equatable {
        /// Not the pending timer (a watch that was reset since), or nothing to judge.
        case ignored
        /// No heading came for the timeout: headings are silent now.
        case silent
        /// A heading came meanwhile: the timer to set for the rest of the timeout.
        case rescheduled(Timer)
    }

    mutating func fired(_ id: Int, now: Duration, timeout: Duration) -> OnFire {
        guard pending == id, let lastArrival else { return .ignored }
        pending = nil
        let silence = now - lastArrival
        if silence >= timeout {
            isSilent = true
            return .silent
        }
        return .rescheduled(newTimer(after: timeout - silence))
    }

    /// A new session opens: nothing is pending, and the next heading starts the watch anew. `silent` when a heading
    /// is held from before: it is not current until the next, which ends the silence.
    mutating func reset(silent: Bool) {
        self = HeadingWatch(timers: timers)
        isSilent = silent
    }

    private init(timers: Int) { self.timers = timers }
    init() {}

    private mutating func newTimer(after: Duration) -> Timer {
        timers += 1
        pending = timers
        return Timer(id: timers, after: after)
    }
}

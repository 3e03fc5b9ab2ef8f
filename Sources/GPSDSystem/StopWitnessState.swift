/// What a ``StopWitness`` knows, as a value: the calls in progress, the tick under way, and the time the witness
/// has found itself not running. The witness's thread and the calls it serves change it under its lock; it takes
/// the instants it is given, so tests drive it with instants of their own.
///
/// While a call is in progress the witness wakes every ``tick``. A wake that comes much later than a tick (more
/// than ``gapLimit``) means the witness did not run in between: the process was stopped (SIGSTOP, Ctrl-Z, a
/// debugger, a cgroup freezer), or the machine gave the witness no processor. The time past one tick is added to
/// ``notRunning``. A call reads the total at its start and at its end; the difference is the time it cannot be
/// blamed for. A witness starved on a busy machine only makes that difference larger, never smaller.
package struct StopWitnessState: Sendable {
    package typealias Instant = ContinuousClock.Instant

    /// How long the witness sleeps between two wakes while a call is in progress.
    package let tick: Duration
    /// The longest gap between two wakes that is only a late wake-up: longer ones count as time not running.
    package var gapLimit: Duration { tick * 3 }

    /// How many calls are in progress: the witness ticks while there is one.
    package private(set) var callsInProgress = 0
    /// Where the tick under way began: the witness's last wake, or the start of the call that woke it from idle.
    /// Nil while it idles.
    private var tickStart: Instant?
    /// Where the last tick that ended began: every stop before it is in ``notRunning``.
    private var lastTickStart: Instant?
    /// The time the witness was not running, summed over every tick since it was made: only differences mean
    /// something.
    package private(set) var notRunning: Duration = .zero

    package init(tick: Duration) {
        self.tick = tick
    }

    /// Whether the witness should tick: a call is in progress.
    package var isTicking: Bool { callsInProgress > 0 }

    /// A call starts at `now`. A witness that idled starts its tick here, so that a stop between now and its
    /// first wake is counted. Returns the total not running so far, which ``callEnded(since:)`` is given back.
    package mutating func callStarted(at now: Instant) -> Duration {
        if callsInProgress == 0 { tickStart = now }
        callsInProgress += 1
        return notRunning
    }

    /// The witness woke at `now`: the gap since the tick began, less one tick, is time it was not running if it
    /// is longer than ``gapLimit``. It ticks on if a call is still in progress, and idles otherwise.
    package mutating func witnessWoke(at now: Instant) {
        guard let start = tickStart else { return }
        let gap = start.duration(to: now)
        if gap > gapLimit { notRunning += gap - tick }
        lastTickStart = start
        tickStart = callsInProgress > 0 ? now : nil
    }

    /// Whether a tick that began at `instant` or after has ended: the witness has then seen every stop before
    /// `instant` (the gap of a stop is counted at the witness's first wake after it, which ends that tick or an
    /// earlier one).
    package func hasSeenEverythingBefore(_ instant: Instant) -> Bool {
        guard let lastTickStart else { return false }
        return lastTickStart >= instant
    }

    /// A call that started when the total was `mark` has ended: returns the time the witness was not running
    /// since then.
    package mutating func callEnded(since mark: Duration) -> Duration {
        precondition(callsInProgress > 0, "a call ended that had not started")
        callsInProgress -= 1
        return notRunning - mark
    }
}

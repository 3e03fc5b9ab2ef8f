import GPSDCore

// The states of a session's life, one struct a state: each is built from the state before it, so a transition
// the diagram does not draw cannot be written.
extension SessionStateMachine {
    /// The session's life. Its transitions:
    ///
    /// ```
    ///                 demandChanged(wanted: true)                  opened, still wanted
    ///   ┌────────┐ ───────────────────────────────▶ ┌─────────┐ ─────────────────────────▶ ┌────────┐
    ///   │  idle  │                                  │ opening │                            │  open  │
    ///   └────────┘ ◀──── failedToOpen ───────────── └─────────┘                            └────────┘
    ///     ▲  ▲                                           │ opened, but it ended meanwhile      │ ended(by:),
    ///     │  │                                           │ or is not wanted: closing            │ demandChanged(false),
    ///     │  │  closed: nothing wanted                   ▼                                      ▼ lingerTimerFired
    ///     │  └───────────────────────────────────── ┌─────────┐ ◀────────────────────────────────┘
    ///     │                                         │ closing │
    ///     │ reconnectTimerFired (not wanted),       └─────────┘
    ///     │ demandChanged(wanted: false)                 │ closed, a retry wanted
    ///   ┌─────────────────────┐ ◀────────────────────────┘
    ///   │ waitingToReconnect  │ ── reconnectTimerFired (wanted) ──▶ opening
    ///   └─────────────────────┘
    /// ```
    /// A `closed` that finds fixes wanted again and no retry due goes straight to opening the next session. An
    /// open session that the last one-shot request left stays open, lingering (``Open/lingerTimer``), until
    /// `lingerTimerFired` closes it; demand that comes back first calls the linger off, and any other loss of
    /// demand closes it at once.
    enum State {
        case idle
        case opening(Opening)
        case open(Open)
        case closing(Closing)
        case waitingToReconnect(WaitingToReconnect)
    }

    /// Session `number` is being opened on some thread.
    struct Opening {
        let number: Int
        /// Set if it failed or finished before its opening returned: what comes after it is closed.
        var ended: NextStep?
        /// When it connected, if it has (its reader may report before the opening returns).
        var connectedSince: Duration?

        init(number: Int) { self.number = number }
    }

    /// Session `number` is open.
    struct Open {
        let number: Int
        let session: any SourceSession
        var connectedSince: Duration?
        /// Set while nothing wants it but it lingers after the last one-shot request: the timer that closes it.
        var lingerTimer: Int?

        /// Only an opening session becomes open.
        init(from opening: Opening, session: any SourceSession) {
            number = opening.number
            connectedSince = opening.connectedSince
            self.session = session
        }
    }

    /// Session `number` is being closed on some thread: nothing wants it any more, or it ended by itself.
    struct Closing {
        let number: Int
        let then: NextStep

        init(from open: Open, then next: NextStep) { (number, then) = (open.number, next) }
        /// An opening that returned after its session ended, or when nothing wanted it.
        init(from opening: Opening, then next: NextStep) { (number, then) = (opening.number, next) }
    }

    /// A session failed while fixes are still wanted: the next opens when timer `timer` fires.
    struct WaitingToReconnect {
        let timer: Int

        /// Only a session that closed after a failure waits to reconnect.
        init(from closing: Closing, timer: Int) { self.timer = timer }
    }

    /// What comes after a session closes.
    enum NextStep: Equatable {
        case stop
        case reconnect(after: Duration)
    }
}

import GPSDCore

// What the session machine's inputs return: each input its own result, saying what it can cause.
extension SessionStateMachine {
    /// A timer to start: the machine is told ``reconnectTimerFired(_:wanted:)`` or ``watchdogFired(_:now:)``
    /// with `id` when it fires.
    struct Timer: Equatable {
        var id: Int
        var after: Duration
    }

    /// A session to open: its number, which attempt since a connection last proved good, and whether it is a
    /// fresh start (no session was wanted before) rather than a reconnection.
    struct SessionToOpen: Equatable {
        var number: Int
        var attempt: Int
        var isFreshStart: Bool
    }

    /// A session to close, on the thread that carries the decision out.
    struct SessionToClose {
        var number: Int
        var session: any SourceSession
    }

    enum OnDemandChanged {
        case none
        case open(SessionToOpen)
        case close(SessionToClose)
        /// The last one-shot request left an open session: it stays open until `Timer` fires, unless something
        /// wants fixes again before (``lingerTimerFired(_:wanted:)``).
        case linger(Timer)
        /// The wait for a reconnection was called off: nothing runs, nor will.
        case stopped
    }

    enum OnOpened {
        /// The session is open: the current one.
        case open(any SourceSession)
        /// It is not wanted (any more), or it is late (its opening was given up): close it.
        case close(SessionToClose)
    }

    enum OnFailedToOpen {
        /// It was not the session being opened.
        case ignored
        /// Nothing runs, nor will: everything waiting on the session fails.
        case stopped
    }

    enum OnClosed {
        case ignored
        case reconnect(Timer)
        case open(SessionToOpen)
        case stopped
    }

    enum OnReconnectTimer {
        /// A late timer, or one whose wait was called off.
        case ignored
        case open(SessionToOpen)
        case stopped
    }

    enum OnEnded: Equatable {
        /// A failure that may pass (`error`): requests that never connected fail; the rest wait for attempt
        /// `attempt`, after `delay`.
        case retry(after: Duration, attempt: Int, because: LocationError)
        /// Everything waiting ends.
        case end
    }

    enum OnLingerTimer {
        /// A late timer, or one whose linger was called off (something wanted fixes again, or the session ended).
        case ignored
        /// Nothing came to want the session while it lingered: close it.
        case close(SessionToClose)
    }

    enum OnWatchdog: Equatable {
        case ignored
        /// Nothing was heard for this long: the session is stale. The watchdog starts again with the next report.
        case stale(silentFor: Duration)
        /// Something was heard meanwhile: the watchdog looks again when the session would be stale.
        case rescheduled(Timer)
    }
}

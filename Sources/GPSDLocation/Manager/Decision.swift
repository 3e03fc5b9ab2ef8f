import GPSDCore

extension LocationManagerStateMachine {
    /// What one input of the machine decided, for the manager to carry out after unlocking: a typed part for each
    /// kind of effect (as HTTPConnectionPool's state machine answers with a request action and a connection
    /// action), filled as the input is decided.
    ///
    /// Each part keeps its own order, and the parts are carried out in a fixed one
    /// (``LocationManager/perform(_:)``): the delegate's calls join its outbox under the lock; then each consumer's
    /// notices and each observer's events are handed over, the held fix is asked for, problems are logged and
    /// timers are set; the session's opening or closing comes last, as it may wait for a thread, so that it never
    /// holds a consumer's notices back. A decision opens or closes at most one session.
    struct Decision {
        /// Delegate calls, in the order decided; they join the delegate's outbox when the decision is made
        /// (``DelegateOutbox``: a fix may join a call that waits there).
        var delegateCalls: [DelegateCall] = []
        /// Once the decision is made: how many blocks the delegate queue is to run for the calls it added to the
        /// outbox, each making the oldest call that waits (``ManagerStorage``).
        var delegateBlocks = 0
        /// Each consumer's notices, one batch per consumer.
        var notifications = Notifications()
        /// Each observer's events, one batch per observer.
        var observations = Observations()
        /// The open session to ask for gpsd's held fix (for requests that take one).
        var heldFixRequest: (any SourceSession)?
        /// The first report problems of their kind, to log.
        var problems: [ReportProblem] = []
        var timers: [Timer] = []
        /// The session to open or close: set by ``transition(_:)``, once.
        private(set) var transition: Transition?

        enum Timer {
            /// The delegate's one-shot request `request` times out.
            case requestTimeout(request: Int, after: Duration)
            case reconnect(timer: Int, after: Duration)
            case watchdog(timer: Int, after: Duration)
            /// The heading watchdog (``HeadingWatch``).
            case headingWatch(timer: Int, after: Duration)
            /// The end of an open session's linger after the last one-shot request.
            case linger(timer: Int, after: Duration)
        }

        enum Transition {
            case open(number: Int)
            case close(number: Int, any SourceSession)
        }

        /// Whether it opens or closes a session.
        var opensOrClosesASession: Bool { transition != nil }

        /// Whether it decided nothing at all.
        var isEmpty: Bool {
            delegateCalls.isEmpty && notifications.isEmpty && observations.isEmpty && heldFixRequest == nil
                && problems.isEmpty && timers.isEmpty && transition == nil
        }

        /// Calls the delegate, in generation `generation` (the heading generation for a heading).
        mutating func call(_ kind: DelegateCall.Kind, generation: Int) {
            delegateCalls.append(DelegateCall(kind: kind, generation: generation))
        }

        /// Sets the session's opening or closing: one per decision.
        mutating func transition(_ transition: Transition) {
            // Two would drop one: a session left open, or one never opened.
            precondition(self.transition == nil, "two sessions opened or closed by one decision")
            self.transition = transition
        }
    }
}

/// Events for observers, gathered while an input is decided: one batch per observer, each in the order decided.
struct Observations {
    private(set) var batches: [Batch] = []

    struct Batch {
        var id: Int
        var observer: SubscriptionTable.Observer
        var events: [ManagerEvent]
    }

    var isEmpty: Bool { batches.isEmpty }

    /// Adds `event` at the end of each of `observers`' batches.
    mutating func add(_ event: ManagerEvent, for observers: [(id: Int, observer: SubscriptionTable.Observer)]) {
        for (id, observer) in observers {
            if let index = batches.firstIndex(where: { $0.id == id }) {
                batches[index].events.append(event)
            } else {
                batches.append(Batch(id: id, observer: observer, events: [event]))
            }
        }
    }

    /// Keeps the batches `isKept` says to keep, in order.
    mutating func keep(where isKept: (Batch) -> Bool) {
        batches.removeAll { !isKept($0) }
    }
}

import GPSDCore

/// The threads a ``LocationManager`` keeps track of, so that a stop waits for the ones it must and never for
/// itself: the delegate callbacks running, the thread carrying out a session's opening or closing, and sessions
/// that closed on their own thread and wait to be joined. A value, kept under the manager's lock
/// (``ManagerStorage``); threads are named by their ids (`SystemThread.currentID`).
struct ManagerThreads {
    /// A delegate callback running now: on which thread, of which generation (the heading generation for a
    /// heading's).
    struct Callback: Equatable {
        var thread: UInt
        var generation: Int
        var isHeading: Bool
    }

    private(set) var callbacks: [Callback] = []
    /// The thread that carries out the opening or closing of a session under way: a stop on it cannot wait
    /// for that.
    private(set) var transitionThread: UInt?
    /// Sessions closed on their own thread, which cannot wait for itself: another thread joins them later.
    private(set) var unjoined: [any SourceSession] = []

    // MARK: Callbacks

    mutating func callbackBegan(_ callback: Callback) {
        callbacks.append(callback)
    }

    /// The callback has returned: the latest one of its kind on its thread (a callback may nest another, when it
    /// runs the delegate queue's work).
    mutating func callbackReturned(_ callback: Callback) {
        if let index = callbacks.lastIndex(of: callback) { callbacks.remove(at: index) }
    }

    /// Whether `thread` is inside a callback: a stop there must not wait for callbacks.
    func isInCallback(_ thread: UInt) -> Bool {
        callbacks.contains { $0.thread == thread }
    }

    /// Whether a callback of that kind (headings or the rest) decided before `generation` still runs.
    func runsCallback(headings: Bool, before generation: Int) -> Bool {
        callbacks.contains { $0.isHeading == headings && $0.generation < generation }
    }

    // MARK: Opening and closing sessions

    /// `thread` decided something: if it opens or closes a session (`transition`), that thread carries it out;
    /// once no session is halfway opened or closed (`settled`), nobody does.
    mutating func decided(transition: Bool, on thread: UInt, settled: Bool) {
        if transition {
            transitionThread = thread
        } else if settled {
            transitionThread = nil
        }
    }

    /// `thread` decided a session's opening or closing but hands it to another thread to carry out: a stop on
    /// `thread` waits for it like any other.
    mutating func handedOff(from thread: UInt) {
        if transitionThread == thread { transitionThread = nil }
    }

    /// Whether `thread` carries out the opening or closing under way, which a stop on it cannot wait for.
    func carriesTransition(_ thread: UInt) -> Bool {
        transitionThread == thread
    }

    /// A session closed on its own thread: another thread joins it later.
    mutating func closedOnItsOwnThread(_ session: any SourceSession) {
        unjoined.append(session)
    }

    /// The sessions closed on their own thread that the caller can join (closing them joins their thread): all but
    /// the one running the caller, which is left for later.
    mutating func takeJoinable() -> [any SourceSession] {
        let (mine, others) = (unjoined.filter(\.isOnItsThread), unjoined.filter { !$0.isOnItsThread })
        unjoined = mine
        return others
    }
}

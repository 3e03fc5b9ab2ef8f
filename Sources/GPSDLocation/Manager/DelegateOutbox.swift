import GPSDCore

/// The delegate's calls decided and not yet made, in the order decided: a ``LocationManager``'s outbox
/// (``ManagerStorage``), made one call at a time on the delegate queue.
///
/// A delegate slower than gpsd gets the newest fix, not a growing queue. From a live gpsd, a fix decided while a
/// `didUpdateLocations` call waits joins that call, as CoreLocation hands its delegate a backlog in one array, the
/// newest last; it joins it past headings and satellite views waiting after it (another sensor's, each in its own
/// call), but not past a status change, a failure or a rejection, which say something of the fixes before and after
/// them: a fix decided after one of those starts a call of its own. Two calls from different generations (a stop
/// came between) are never joined, so a stop still drops every call decided before it.
///
/// What waits is bounded as a stream's default buffer is (``BacklogBound/default``), by kind: of the fixes waiting
/// (in all the calls that wait), of the headings, and of the views, the newest 16 are kept, and any decided 2 s ago
/// or less, and at most 1024; older ones go, oldest first, and are counted. Status changes, failures and rejections
/// are never dropped: they come only when something changes. A replay's outbox (no bound) keeps every call as it was
/// decided, one fix a call: the replay waits for the delegate instead, and drops nothing.
struct DelegateOutbox {
    /// A call to make, and when each of its items was decided: each fix of a `didUpdateLocations` call, or the one
    /// heading or view.
    private struct Entry {
        var call: DelegateCall
        var decided: [Duration]

        /// What it carries, as the bound counts: fixes, a heading, a view; `nil` for what is never dropped.
        var kind: Kind? {
            switch call.kind {
            case .locations: .fixes
            case .heading: .heading
            case .satellites: .satellites
            case .status, .failure, .rejection: nil
            }
        }
    }

    private enum Kind { case fixes, heading, satellites }

    private var entries: [Entry] = []
    /// What a live gpsd's outbox keeps; `nil` for a replay's, which keeps everything.
    private let bound: BacklogBound?

    /// - Parameter bound: what to keep of a backlog, which fixes join; `nil` keeps every call as decided.
    init(bound: BacklogBound?) { self.bound = bound }

    /// How many calls wait.
    var count: Int { entries.count }

    /// Whether calls are joined and bounded, and so need the time they were decided.
    var isBounded: Bool { bound != nil }

    /// Adds `calls`, decided at `now`, in order: each waits as a call of its own, or joins one that waits. Returns
    /// how many items the bound dropped.
    mutating func add(_ calls: [DelegateCall], at now: Duration) -> Int {
        guard let bound else {
            entries.append(contentsOf: calls.map { Entry(call: $0, decided: []) })
            return 0
        }
        var dropped = 0
        for call in calls {
            let entry = Entry(call: call, decided: Array(repeating: now, count: call.itemCount))
            if case .locations(let fixes) = call.kind, let index = waitingLocations(of: call.generation),
               case .locations(let waiting) = entries[index].call.kind {
                entries[index].call.kind = .locations(waiting + fixes)
                entries[index].decided += entry.decided
            } else {
                entries.append(entry)
            }
            if let kind = entry.kind { dropped += trim(kind, bound, at: now) }
        }
        return dropped
    }

    /// The oldest call that waits, if any.
    mutating func popFirst() -> DelegateCall? {
        entries.isEmpty ? nil : entries.removeFirst().call
    }

    /// The `didUpdateLocations` call of `generation` a fix decided now joins: the newest that waits, if only
    /// headings and views wait after it.
    private func waitingLocations(of generation: Int) -> Int? {
        for index in entries.indices.reversed() {
            switch entries[index].call.kind {
            case .heading, .satellites: continue
            case .locations: return entries[index].call.generation == generation ? index : nil
            case .status, .failure, .rejection: return nil
            }
        }
        return nil
    }

    /// Drops, oldest first, the items of `kind` that `bound` does not keep at `now`, and the calls left with none.
    /// Returns how many it dropped.
    private mutating func trim(_ kind: Kind, _ bound: BacklogBound, at now: Duration) -> Int {
        let holding = entries.indices.filter { entries[$0].kind == kind }
        let decided = holding.flatMap { entries[$0].decided }
        guard decided.count > bound.newest else { return 0 }
        var excess = bound.excess(count: decided.count, now: now) { decided[$0] }
        let dropped = excess
        var emptied: [Int] = []
        for index in holding where excess > 0 {
            let items = min(excess, entries[index].decided.count)
            excess -= items
            entries[index].decided.removeFirst(items)
            if entries[index].decided.isEmpty {
                emptied.append(index)
            } else if case .locations(let fixes) = entries[index].call.kind {
                entries[index].call.kind = .locations(Array(fixes.dropFirst(items)))
            }
        }
        // A call left with nothing is not made: the block queued for it makes a later call, or finds none.
        for index in emptied.reversed() { entries.remove(at: index) }
        return dropped
    }
}

/// A delegate call a ``LocationManager`` decided, with the generation it was decided in: a call of an earlier
/// generation than the manager's (a stop came in between) is not made.
struct DelegateCall {
    enum Kind {
        case locations([Location])
        case failure(LocationError)
        case status(LocationStatus)
        case rejection(FixRejection)
        case heading(Heading)
        case satellites(SkyView)
    }

    var kind: Kind
    /// The generation it was decided in: the heading generation for a heading.
    var generation: Int

    /// Whether ``LocationManager/stopUpdatingHeading()`` drops it, rather than ``LocationManager/stopUpdatingLocation()``.
    var isHeading: Bool {
        if case .heading = kind { true } else { false }
    }
}

extension DelegateCall {
    /// How many items the outbox's bound counts in it: its fixes, or one heading or view; none for the rest.
    fileprivate var itemCount: Int {
        switch kind {
        case .locations(let fixes): fixes.count
        case .heading, .satellites: 1
        case .status, .failure, .rejection: 0
        }
    }
}

import GPSDCore

/// The delegate calls a ``LocationManager`` has decided and not yet made, oldest first: queued under the
/// manager's lock as the state machine decides them, made one per block on the delegate queue. So the delegate
/// hears of fixes and failures in the order they were decided, whichever threads decided them.
struct DelegateOutbox {
    enum Call {
        case locations([Location])
        case failure(LocationError)
        case status(LocationStatus)
    }

    private var calls: [(call: Call, generation: Int)] = []
    private var head = 0

    /// Queues the delegate calls among `actions`.
    mutating func queue(_ actions: [LocationManagerStateMachine.Action]) {
        for action in actions {
            switch action {
            case .deliver(let locations, let generation): calls.append((.locations(locations), generation))
            case .fail(let error, let generation): calls.append((.failure(error), generation))
            case .tellStatus(let status, let generation): calls.append((.status(status), generation))
            default: break
            }
        }
    }

    /// The oldest call not yet made, with the generation it was decided in.
    mutating func next() -> (Call, Int)? {
        guard head < calls.count else { return nil }
        defer {
            head += 1
            if head == calls.count {
                calls.removeAll(keepingCapacity: true)
                head = 0
            }
        }
        return (calls[head].call, calls[head].generation)
    }
}

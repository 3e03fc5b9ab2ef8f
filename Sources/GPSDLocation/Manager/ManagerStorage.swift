import Logging
import GPSDCore
import GPSDSystem

/// A ``LocationManager``'s state and the one lock that guards it: the only place that takes the lock (as
/// `ChannelStorage` is in swift-async-algorithms). What is decided under it comes back as actions, which the
/// manager carries out after unlocking (``LocationManager/modifyStateAndRunActions(_:)``); delegate calls are
/// queued in the order they were decided before the lock is released.
final class ManagerStorage: Sendable {
    typealias Action = LocationManagerStateMachine.Action

    struct State {
        var machine: LocationManagerStateMachine
        weak var delegate: (any LocationManagerDelegate)?
        var logger = Logger(label: "GPSDLocation")
        /// Delegate calls decided and not yet made, in the order they were decided.
        var outbox = DeliveryQueue<DelegateCall>()
        /// The delegate callbacks running now: on which thread, of which generation (the heading generation for a
        /// heading's).
        var callbacks: [(thread: UInt, generation: Int, isHeading: Bool)] = []
        /// The thread that carries out the opening or closing of a session under way: a stop on it cannot wait
        /// for that.
        var transitionThread: UInt?
        /// Sessions closed on their own thread, which cannot wait for itself: another thread joins them later.
        var unjoined: [any SourceSession] = []
    }

    private let state: Locked<State>

    init(_ state: State) {
        self.state = Locked(state)
    }

    /// Runs `body` under the lock, and notes what it decided: its delegate calls are queued in the order decided,
    /// and the thread that decided an opening or closing is taken for the one that carries it out (an
    /// unsubscribe that hands its closing to a thread of its own says so after, ``LocationManager/unsubscribe(_:)``).
    func decide<Result>(_ body: (inout State) -> (Result, [Action])) -> (Result, [Action]) {
        state.withLock { state in
            let (result, actions) = body(&state)
            state.outbox.queue(actions)
            if actions.contains(where: \.opensOrClosesASession) {
                state.transitionThread = SystemThread.currentID
            } else if !state.machine.session.isHalfway(upTo: .max) {
                state.transitionThread = nil
            }
            return (result, actions)
        }
    }

    /// ``decide(_:)`` of an input of the state machine alone.
    func decide(_ input: (inout LocationManagerStateMachine) -> [Action]) -> [Action] {
        decide { state in ((), input(&state.machine)) }.1
    }

    /// Reads the state.
    func read<Result>(_ body: (State) -> Result) -> Result {
        state.withLock { body($0) }
    }

    /// Changes what decides nothing by itself (the configuration, the delegate, the callbacks running).
    func update<Result>(_ body: (inout State) -> Result) -> Result {
        state.withLock(body)
    }

    /// Waits until `condition` holds.
    func wait(until condition: (State) -> Bool) {
        state.withLock(when: condition) { _ in }
    }
}

import Logging
import GPSDCore
import GPSDSystem

/// A ``LocationManager``'s state and the one lock that guards it: the only place that takes the lock (as
/// `ChannelStorage` is in swift-async-algorithms). What is decided under it comes back as a decision, which the
/// manager carries out after unlocking (``LocationManager/modifyStateAndRunActions(_:)``).
///
/// Order is kept where it is decided. Before the lock is released, delegate calls join the outbox, and each
/// consumer's notices (and each observer's events) join that consumer's queue, in the order decided. One thread
/// at a time hands a consumer its notices: the thread that decides some while nobody is handing that consumer's
/// over takes the hand-over (its action carries them), and after each batch takes what was queued meanwhile
/// (``hand(_:to:)``), until none is left; a thread that decides some while another hands them over leaves
/// them queued for it. So a consumer gets its notices in the order decided, one batch at a time, whichever
/// threads decided them.
final class ManagerStorage: Sendable {
    typealias Decision = LocationManagerStateMachine.Decision

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
        /// The consumers a thread is handing notices to now, with the notices decided for each meanwhile.
        var handOvers: [ObjectIdentifier: [SubscriptionNotice]] = [:]
        /// The same for observers, by id.
        var observerHandOvers: [Int: [ManagerEvent]] = [:]
        /// How many notices and events are queued for hand-overs, in all.
        var queuedForHandOver = 0

        /// How many delegate calls are decided and not yet returned: the depth of the delegate's buffer.
        var delegateBacklog: Int { outbox.count + callbacks.count }

        /// Queues the notices and observations `decision` holds: those for a consumer (an observer) that another
        /// thread is handing over to are left to it and dropped from the decision; the others' hand-over is taken
        /// by the decision, which the deciding thread carries out.
        /// Returns how many notices and events it left to other threads.
        ///
        /// A hand-over is taken where it is decided, so that decisions on two threads cannot swap; so it is held from
        /// here until the decision is carried out, which hands notices over before it opens or closes a session
        /// (which may wait for a thread), lest that hold the consumer's notices back meanwhile.
        mutating func route(_ decision: inout Decision) -> Int {
            var left = 0
            if !decision.notifications.isEmpty {
                decision.notifications.keep { batch in
                    let key = ObjectIdentifier(batch.consumer)
                    guard handOvers[key] == nil else {
                        handOvers[key]!.append(contentsOf: batch.notices)
                        left += batch.notices.count
                        return false
                    }
                    handOvers[key] = []
                    return true
                }
            }
            if !decision.observations.isEmpty {
                decision.observations.keep { batch in
                    guard observerHandOvers[batch.id] == nil else {
                        observerHandOvers[batch.id]!.append(contentsOf: batch.events)
                        left += batch.events.count
                        return false
                    }
                    observerHandOvers[batch.id] = []
                    return true
                }
            }
            return left
        }
    }

    private let state: Locked<State>
    /// A replay's accounts of the two buffers here (`nil` for a live source): the delegate's calls decided and not
    /// yet returned, and the notices queued for a thread handing them over (in no consumer's buffer yet, and a
    /// replay must not run ahead of them). Each reports its depth under the lock, as it changes.
    private let delegatePacing: PacedConsumer?
    private let queuedPacing: PacedConsumer?

    /// - Parameters:
    ///   - state: the state to start from.
    ///   - backpressure: a replay's, which the buffers here join; `nil` for a live source.
    init(_ state: State, backpressure: ReplayBackpressure? = nil) {
        self.state = Locked(state)
        delegatePacing = backpressure?.join()
        queuedPacing = backpressure?.join()
    }

    /// Runs `body` under the lock, and notes what it decided: its delegate calls are queued in the order decided,
    /// and the thread that decided an opening or closing is taken for the one that carries it out (an
    /// unsubscribe that hands its closing to a thread of its own says so after, ``LocationManager/unsubscribe(_:)``).
    func decide<Result>(_ body: (inout State) -> (Result, Decision)) -> (Result, Decision) {
        state.withLock { state in
            var (result, decision) = body(&state)
            // Each buffer's depth is told the replay under this lock (the replay's lock never takes this one).
            if !decision.delegateCalls.isEmpty {
                state.outbox.append(contentsOf: decision.delegateCalls)
                delegatePacing?.buffered(state.delegateBacklog)
            }
            let left = state.route(&decision)
            if left > 0 {
                state.queuedForHandOver += left
                queuedPacing?.buffered(state.queuedForHandOver)
            }
            if decision.opensOrClosesASession {
                state.transitionThread = SystemThread.currentID
            } else if !state.machine.session.isHalfway(upTo: .max) {
                state.transitionThread = nil
            }
            return (result, decision)
        }
    }

    /// ``decide(_:)`` of an input of the state machine alone.
    func decide(_ input: (inout LocationManagerStateMachine) -> Decision) -> Decision {
        decide { state in ((), input(&state.machine)) }.1
    }

    /// For the thread that took the hand-over of `consumer` (its action carries `notices`): hands it them, then
    /// what is decided for it meanwhile, batch by batch, until none is left, and the hand-over ends.
    func hand(_ notices: [SubscriptionNotice], to consumer: any SubscriptionConsumer) {
        var notices = notices
        while true {
            consumer.receive(notices)
            guard let next = nextNotices(for: consumer) else { return }
            notices = next
        }
    }

    /// ``hand(_:to:)`` for observer `id`, told one event at a time.
    func tell(_ events: [ManagerEvent], to observer: SubscriptionTable.Observer, id: Int) {
        for event in events { observer(event) }
        while let next = nextEvents(forObserver: id) {
            for event in next { observer(event) }
        }
    }

    /// The notices decided for `consumer` while this thread handed it others; or `nil` when there are none, and the
    /// hand-over ends (the next notices go to whichever thread decides them).
    private func nextNotices(for consumer: any SubscriptionConsumer) -> [SubscriptionNotice]? {
        state.withLock { takeQueued(ObjectIdentifier(consumer), from: \.handOvers, &$0) }
    }

    /// ``nextNotices(for:)`` for observer `id`.
    private func nextEvents(forObserver id: Int) -> [ManagerEvent]? {
        state.withLock { takeQueued(id, from: \.observerHandOvers, &$0) }
    }

    /// Under the lock: what is queued for `key`'s hand-over in `queues`, the count of all queued for hand-overs told
    /// the replay; or `nil`, ending the hand-over, when nothing is.
    private func takeQueued<Key: Hashable, Item>(
        _ key: Key, from queues: WritableKeyPath<State, [Key: [Item]]>, _ state: inout State
    ) -> [Item]? {
        guard let queued = state[keyPath: queues][key], !queued.isEmpty else {
            state[keyPath: queues][key] = nil
            return nil
        }
        state[keyPath: queues][key] = []
        state.queuedForHandOver -= queued.count
        queuedPacing?.buffered(state.queuedForHandOver)
        return queued
    }

    /// Whether a thread is handing `consumer` its notices now: for tests.
    func isHandingOver(to consumer: any SubscriptionConsumer) -> Bool {
        state.withLock { $0.handOvers[ObjectIdentifier(consumer)] != nil }
    }

    /// A delegate call has returned (or was dropped): the delegate's buffer is that much shallower.
    func delegateCallEnded() {
        guard let delegatePacing else { return }
        state.withLock { delegatePacing.buffered($0.delegateBacklog) }
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

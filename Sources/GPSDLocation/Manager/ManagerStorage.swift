import Logging
import GPSDCore
import GPSDSystem
import Synchronization

/// A ``LocationManager``'s state and the one lock that guards it: the only place that takes the lock (as
/// `ChannelStorage` is in swift-async-algorithms). The state machine, the delegate's outbox, the threads to wait
/// for and the hand-overs are private to it; the manager reaches them through named operations only. Each input
/// is decided under the lock and answers with a ``LocationManagerStateMachine/Decision``, which the manager
/// carries out after unlocking (``LocationManager/perform(_:)``).
///
/// Order is kept where it is decided. Before the lock is released, delegate calls join the outbox (from a live gpsd,
/// a fix joins a `didUpdateLocations` call still waiting there, and a backlog is bounded: ``DelegateOutbox``), and each
/// consumer's notices (and each observer's events) join that consumer's queue, in the order decided. One thread
/// at a time hands a consumer its notices: the thread that decides some while nobody is handing that consumer's
/// over takes the hand-over (its decision carries them), and after each batch takes what was queued meanwhile
/// (``hand(_:to:)``), until none is left; a thread that decides some while another hands them over leaves
/// them queued for it. So a consumer gets its notices in the order decided, one batch at a time, whichever
/// threads decided them.
final class ManagerStorage: Sendable {
    typealias Decision = LocationManagerStateMachine.Decision
    typealias Machine = LocationManagerStateMachine

    private struct State {
        var machine: Machine
        weak var delegate: (any LocationManagerDelegate)?
        var logger = Logger(label: "GPSDLocation")
        /// Delegate calls decided and not yet made, in the order they were decided.
        var outbox: DelegateOutbox
        /// Blocks queued on the delegate queue and not yet begun, each to make the oldest call in the outbox: at
        /// least one for each call there. No more are queued while there are as many as calls: a call the bound
        /// dropped leaves its block to make a later call, so blocks never pile up behind a slow delegate.
        var delegateBlocks = 0
        var threads = ManagerThreads()
        /// The consumers a thread is handing notices to now, with the notices decided for each meanwhile.
        var handOvers: [ObjectIdentifier: [SubscriptionNotice]] = [:]
        /// The same for observers, by id.
        var observerHandOvers: [Int: [ManagerEvent]] = [:]
        /// How many notices and events are queued for hand-overs, in all.
        var queuedForHandOver = 0

        /// How many delegate calls are decided and not yet returned: the depth of the delegate's buffer.
        var delegateBacklog: Int { outbox.count + threads.callbacks.count }

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
    /// The clock health is timed by.
    private let clock: any ManagerClock
    /// Where health goes, after the lock is released; `nil` for none.
    private let metrics: HealthMetrics?
    /// What the streams' buffers dropped: counted by the streams as they drop, without the lock.
    private let streamDrops = Atomic(0)

    /// - Parameters:
    ///   - requestTimeout: how long a one-shot request of the delegate waits at first.
    ///   - jitterSeed: the reconnection jitter's.
    ///   - backpressure: a replay's, which the buffers here join; `nil` for a live source.
    ///   - clock: the manager's, which times its health.
    ///   - metrics: where its health is reported.
    init(requestTimeout: Duration, jitterSeed: UInt64, backpressure: ReplayBackpressure? = nil,
         clock: any ManagerClock = SystemManagerClock(), metrics: HealthMetrics? = nil) {
        var machine = Machine(requestTimeout: requestTimeout, jitterSeed: jitterSeed)
        machine.health.begin(at: clock.now)
        // A replay waits for the delegate instead of dropping: its outbox keeps every call as decided.
        state = Locked(State(machine: machine, outbox: DelegateOutbox(bound: backpressure == nil ? .default : nil)))
        delegatePacing = backpressure?.join()
        queuedPacing = backpressure?.join()
        self.clock = clock
        self.metrics = metrics
        if let metrics, let changes = state.withLock({ $0.machine.health.takePending() }) { metrics.record(changes) }
    }

    // MARK: Deciding

    /// Runs `body` under the lock, and notes what it decided: its delegate calls are queued in the order decided,
    /// its notices routed, and the thread that decided an opening or closing is taken for the one that carries it
    /// out (an unsubscribe that hands its closing to a thread of its own says so after, ``handOffTransition()``).
    ///
    /// Health is timed at `now` (an input's own time), or when a status changed, at the clock's; what it changed is
    /// told the metrics after the lock is released. The delegate calls join the outbox; what its bound dropped is
    /// counted after the lock too, and the decision queues a block on the delegate queue for each call the outbox
    /// holds beyond the blocks already queued.
    private func decide<Result>(now: Duration? = nil, _ body: (inout State) -> (Result, Decision)) -> (Result, Decision) {
        let (result, decision, changes, dropped) = state.withLock { state in
            var (result, decision) = body(&state)
            let changes = health(&state.machine, now: now)
            var dropped = 0
            // Each buffer's depth is told the replay under this lock (the replay's lock never takes this one).
            if !decision.delegateCalls.isEmpty {
                let decided = state.outbox.isBounded ? now ?? clock.now : .zero
                dropped = state.outbox.add(decision.delegateCalls, at: decided)
                decision.delegateBlocks = max(0, state.outbox.count - state.delegateBlocks)
                state.delegateBlocks += decision.delegateBlocks
                delegatePacing?.buffered(state.delegateBacklog)
            }
            let left = state.route(&decision)
            if left > 0 {
                state.queuedForHandOver += left
                queuedPacing?.buffered(state.queuedForHandOver)
            }
            state.threads.decided(
                transition: decision.opensOrClosesASession, on: SystemThread.currentID,
                settled: !state.machine.session.isHalfway(upTo: .max))
            return (result, decision, changes, dropped)
        }
        if let changes { metrics?.record(changes) }
        if dropped > 0 { streamDropped(dropped) }
        return (result, decision)
    }

    /// Under the lock, after an input: times the status at `now` (or the clock's, if a status was announced), notes
    /// the statistics and the newest fix's age, and takes what the metrics are to be told, if they are kept.
    private func health(_ machine: inout Machine, now: Duration?) -> HealthTracker.Changes? {
        guard let now = now ?? (machine.health.awaitsTime ? clock.now : nil) else {
            return metrics == nil ? nil : machine.health.takePending()
        }
        machine.health.settle(at: now)
        guard metrics != nil else { return nil }
        machine.health.note(machine.epochs.statistics)
        if let measured = machine.epochs.latest?.measured { machine.health.pending.lastFixAge = max(.zero, now - measured) }
        return machine.health.takePending()
    }

    /// ``decide(_:)`` of an input of the state machine alone.
    private func decide(now: Duration? = nil, _ input: (inout Machine) -> Decision) -> Decision {
        decide(now: now) { state in ((), input(&state.machine)) }.1
    }

    /// Decides what `make` makes under the lock, as though an input had: for tests of the routing.
    func route(_ make: () -> Decision) -> Decision {
        decide { _ in ((), make()) }.1
    }

    // MARK: The delegate's inputs

    func requestLocation() -> Decision { decide { $0.requestLocation() } }
    func startUpdating() -> Decision { decide { $0.startUpdating() } }
    func startUpdatingHeading() -> Decision { decide { $0.startUpdatingHeading() } }

    /// What a stop of the delegate's fixes or headings waits for once its decision is carried out.
    struct DelegateStop {
        /// The generation the stop began: callbacks of earlier ones are waited for.
        var generation: Int
        /// Whether the stop was called from inside a callback, which waits for no callback.
        var insideCallback: Bool
        /// The newest session begun, whose opening or closing the stop waits for.
        var sessionNumber: Int
    }

    /// Stops the delegate's headings, or its fixes and requests.
    func stopDelegateCalls(headings: Bool) -> (DelegateStop, Decision) {
        let thread = SystemThread.currentID
        return decide { state in
            let decision = headings ? state.machine.stopUpdatingHeading() : state.machine.stopUpdating()
            let subscriptions = state.machine.subscriptions
            let stop = DelegateStop(
                generation: headings ? subscriptions.headingGeneration : subscriptions.generation,
                insideCallback: state.threads.isInCallback(thread), sessionNumber: state.machine.session.sessionCount)
            return (stop, decision)
        }
    }

    /// Waits until no callback of that kind decided before `stop` runs.
    func waitForCallbacks(headings: Bool, before stop: DelegateStop) {
        state.withLock(when: { !$0.threads.runsCallback(headings: headings, before: stop.generation) }) { _ in }
    }

    /// Takes the oldest delegate call decided and not yet made, with the delegate to make it to, unless a stop
    /// came after it was decided (or there is no delegate), and notes it running on this thread until
    /// ``delegateCallReturned(_:)``.
    func nextDelegateCall() -> (any LocationManagerDelegate, DelegateCall)? {
        let thread = SystemThread.currentID
        // The delegate leaves the lock either way: were this the last reference to it, its deinit (which may call
        // the manager) runs unlocked.
        let (delegate, call) = state.withLock { state -> ((any LocationManagerDelegate)?, DelegateCall?) in
            state.delegateBlocks -= 1
            guard let call = state.outbox.popFirst() else { return (nil, nil) }
            let subscriptions = state.machine.subscriptions
            let delegate = state.delegate
            guard delegate != nil,
                  call.generation == (call.isHeading ? subscriptions.headingGeneration : subscriptions.generation) else {
                delegatePacing?.buffered(state.delegateBacklog)   // dropped: its buffer is that much shallower
                return (delegate, nil)
            }
            state.threads.callbackBegan(.init(thread: thread, generation: call.generation, isHeading: call.isHeading))
            return (delegate, call)
        }
        guard let delegate, let call else { return nil }
        return (delegate, call)
    }

    /// The delegate call ``nextDelegateCall()`` took has returned: a stop need not wait for it, and a replay
    /// waiting for the delegate may go on.
    func delegateCallReturned(_ call: DelegateCall) {
        let callback = ManagerThreads.Callback(
            thread: SystemThread.currentID, generation: call.generation, isHeading: call.isHeading)
        state.withLock { state in
            state.threads.callbackReturned(callback)
            delegatePacing?.buffered(state.delegateBacklog)
        }
    }

    // MARK: The async bridge's and the observers' inputs

    func reserveSubscription() -> SubscriptionID {
        state.withLock { $0.machine.subscriptions.reserve() }
    }

    /// `nil` if the id was given back first.
    func subscribe(_ id: SubscriptionID, _ request: SubscriptionRequest, consumer: any SubscriptionConsumer) -> Decision? {
        let (subscribed, decision) = decide { state -> (Bool, Decision) in
            guard let decision = state.machine.subscribe(id, request, consumer) else { return (false, Decision()) }
            return (true, decision)
        }
        return subscribed ? decision : nil
    }

    func unsubscribe(_ id: SubscriptionID, lingering: Bool) -> (EndedSubscription?, Decision) {
        decide { $0.machine.unsubscribe(id, lingering: lingering) }
    }

    func endSubscriptions(_ ids: [SubscriptionID]) -> ([SubscriptionID], Decision) {
        decide { state in
            let (decision, ended) = state.machine.endSubscriptions(ids)
            return (ended, decision)
        }
    }

    func addObserver(_ observer: @escaping SubscriptionTable.Observer, startingWithStatus: Bool) -> (Int, Decision) {
        decide { $0.machine.addObserver(observer, startingWithStatus: startingWithStatus) }
    }

    func removeObserver(_ id: Int) {
        state.withLock { $0.machine.removeObserver(id) }
    }

    // MARK: The session's inputs

    func handle(_ events: [SourceEvent], session: Int, now: Duration, arrival: Location.Arrival) -> Decision {
        decide(now: now) { $0.handle(events, session: session, now: now, arrival: arrival) }
    }

    func sessionOpened(_ number: Int, _ session: any SourceSession) -> Decision {
        decide { $0.sessionOpened(number, session) }
    }

    func sessionFailedToOpen(_ number: Int, _ error: LocationError) -> Decision {
        decide { $0.sessionFailedToOpen(number, error) }
    }

    /// Session `number` is closed; if it `closedItself` (on its own thread), another thread is to join it.
    func sessionClosed(_ number: Int, _ session: any SourceSession, closedItself: Bool) -> Decision {
        decide { state in
            if closedItself { state.threads.closedOnItsOwnThread(session) }
            return ((), state.machine.sessionClosed(number))
        }.1
    }

    func requestTimedOut(_ request: Int) -> Decision { decide { $0.requestTimedOut(request) } }
    func reconnectTimerFired(_ timer: Int) -> Decision { decide { $0.reconnectTimerFired(timer) } }
    func lingerTimerFired(_ timer: Int) -> Decision { decide { $0.lingerTimerFired(timer) } }
    func watchdogFired(_ timer: Int, now: Duration) -> Decision {
        decide(now: now) { $0.watchdogFired(timer, now: now) }
    }
    func headingWatchFired(_ timer: Int, now: Duration) -> Decision {
        decide(now: now) { $0.headingWatchFired(timer, now: now) }
    }

    // MARK: Threads

    /// This thread decided a session's opening or closing, and hands it to another to carry out.
    func handOffTransition() {
        let thread = SystemThread.currentID
        state.withLock { $0.threads.handedOff(from: thread) }
    }

    /// Waits until no session up to `number` is halfway opened or closed on another thread.
    func waitUntilSettled(upTo number: Int) {
        let thread = SystemThread.currentID
        state.withLock(when: {
            $0.threads.carriesTransition(thread) || !$0.machine.session.isHalfway(upTo: number)
        }) { _ in }
    }

    /// The sessions that closed on their own thread and that this thread can join.
    func takeJoinableSessions() -> [any SourceSession] {
        state.withLock { $0.threads.takeJoinable() }
    }

    /// At the manager's end, when nothing else can act: the sessions left to close.
    func sessionsLeft() -> [any SourceSession] {
        state.withLock { state in (state.machine.session.openSession.map { [$0] } ?? []) + state.threads.unjoined }
    }

    // MARK: Hand-overs

    /// For the thread that took the hand-over of `consumer` (its decision carries `notices`): hands it them, then
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

    // MARK: Settings

    var delegate: (any LocationManagerDelegate)? {
        get { state.withLock { $0.delegate } }
        set { state.withLock { $0.delegate = newValue } }
    }

    var logger: Logger {
        get { state.withLock { $0.logger } }
        set { state.withLock { $0.logger = newValue } }
    }

    var configuration: Machine.Configuration { state.withLock { $0.machine.configuration } }

    /// An input of new settings: `change` to the present ones.
    func configure(_ change: (inout Machine.Configuration) -> Void) {
        state.withLock { state in
            var configuration = state.machine.configuration
            change(&configuration)
            state.machine.configure(configuration)
        }
    }

    // MARK: What the manager knows

    var latest: (location: Location, measured: Duration?)? { state.withLock { $0.machine.epochs.latest } }
    var sky: SkyView? { state.withLock { $0.machine.epochs.sky } }
    var status: LocationStatus { state.withLock { $0.machine.status.current } }
    var statistics: ReportStatistics { state.withLock { $0.machine.epochs.statistics } }
    var health: LocationHealth {
        let now = clock.now
        let streamDrops = streamDrops.load(ordering: .relaxed)
        return state.withLock { state in
            state.machine.health.health(
                at: now, lastFixMeasured: state.machine.epochs.latest?.measured,
                statistics: state.machine.epochs.statistics, streamDrops: streamDrops)
        }
    }

    /// A stream's buffer (or the delegate's outbox) dropped `count` elements: counted, and told the metrics (no lock
    /// held).
    func streamDropped(_ count: Int) {
        streamDrops.add(count, ordering: .relaxed)
        metrics?.streamDropped(count)
    }
    var heading: Heading? { state.withLock { $0.machine.heading } }
    /// Blocks queued on the delegate queue and not yet begun, and the delegate calls that wait for them.
    var delegateQueueDepth: (blocks: Int, calls: Int) { state.withLock { ($0.delegateBlocks, $0.outbox.count) } }
    /// Read under the lock, the clock too: no fix or heading in it arrived after its instant.
    var snapshot: LocationSnapshot {
        state.withLock { $0.machine.snapshot(now: clock.now, instant: clock.arrival.instant) }
    }
    var receiversKept: Int { state.withLock { $0.machine.epochs.coalescer.receiverCount } }
    var subscriptionCount: Int { state.withLock { $0.machine.subscriptions.subscriptions.count } }
    var sessionNumber: Int { state.withLock { $0.machine.session.sessionCount } }
}

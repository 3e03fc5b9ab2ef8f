import GPSDCore
import GPSDSystem

/// The buffer between the manager's thread and one consumer of a stream of fixes or of a live timeline: what
/// ``LocationUpdates`` and ``LiveUpdates`` iterate.
///
/// It does what an `AsyncThrowingStream` does for them, at a cost per element that does not depend on how many come
/// at once: the thread that passes a batch on appends all of it under one lock and resumes the consumer once, if
/// it is waiting; a consumer that finds elements buffered takes one under the lock without suspending. (An
/// `AsyncThrowingStream` takes its lock and may resume its consumer for each element.)
///
/// Like an `AsyncThrowingStream`: a waiting consumer gets the first element that comes, whatever the ``Limit``
/// (it waits only while nothing is buffered); the buffer keeps what its ``Limit`` says and counts what it drops
/// (the streams' default, ``Limit/recent(_:)``, is the channel's own: no `AsyncThrowingStream` policy keeps that);
/// a finish lets the consumer take what is buffered, then ends the iteration (or throws the error it finished
/// with); the consumer's task cancelled, while it waits or before it asks, ends the channel as a finish does; the
/// sequence and every iterator of it gone ends it and drops what it held. Either way the termination handler runs
/// once, outside the lock.
package final class UpdateChannel<Element: Sendable, Failure: Error>: Sendable {
    /// What the buffer keeps while the consumer has not taken it.
    package enum Limit: Sendable {
        case unbounded
        /// The newest `n`: the oldest goes when a new one comes.
        case newest(Int)
        /// The oldest `n`: a new one is dropped.
        case oldest(Int)
        /// The newest, and any that has waited less than a while, up to a ceiling (``BacklogBound``): a reader
        /// that keeps up gets a whole burst, one that does not holds bounded memory. The streams' default.
        case recent(BacklogBound)

        /// What `policy` says; `nil`, the default: ``recent(_:)`` by ``BacklogBound/default``.
        init<T>(_ policy: AsyncThrowingStream<T, any Error>.Continuation.BufferingPolicy?) {
            guard let policy else {
                self = .recent(.default)
                return
            }
            switch policy {
            case .bufferingNewest(let count): self = .newest(max(0, count))
            case .bufferingOldest(let count): self = .oldest(max(0, count))
            default: self = .unbounded
            }
        }
    }

    /// What became of an element handed to the channel.
    private enum Received {
        /// Given to the consumer, which is to be resumed with it.
        case handed(UnsafeContinuation<Result<Element?, Failure>, Never>)
        /// Buffered: one more waiting to be taken.
        case kept
        /// Dropped, or kept in place of the oldest, which was (the newest `n`): no more waiting to be taken.
        case dropped
    }

    /// An element not yet taken, and when it came (by the channel's clock; zero unless its limit is timed).
    private struct Slot {
        var element: Element
        var arrival: Duration
    }

    private struct State {
        /// Elements not yet taken: `buffer[head...]`.
        var buffer: [Slot] = []
        var head = 0
        /// When the newest element came: a later one is stamped no earlier.
        var lastArrival = Duration.zero
        /// The consumer, suspended until an element or the end comes.
        var waiter: UnsafeContinuation<Result<Element?, Failure>, Never>?
        /// How the channel ended, once it has: the consumer takes what is buffered, then this.
        var end: Result<Void, Failure>?
        /// Runs once, when the channel ends; taken out to run outside the lock.
        var onTermination: (@Sendable () -> Void)?
        var yielded = 0
        var dropped = 0
        /// How many times the consumer has suspended in ``next()``: for tests.
        var suspensions = 0
        /// Whether a replay still waits for the consumer: then the buffer keeps everything, else what the channel's
        /// limit says.
        var paced: Bool

        var count: Int { buffer.count - head }

        mutating func takeFirst() -> Element? {
            guard head < buffer.count else { return nil }
            let element = buffer[head].element
            removeFirst(1)
            return element
        }

        /// Lets the oldest `count` buffered go, taken or dropped.
        mutating func removeFirst(_ count: Int) {
            head += count
            if head == buffer.count {
                buffer.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 64, head * 2 >= buffer.count {
                buffer.removeFirst(head)   // what has gone, once it is at least half the storage
                head = 0
            }
        }

        /// Hands `element` to the waiting consumer, if any, whatever `limit` says, as an `AsyncThrowingStream`
        /// does (even one that buffers nothing): it waits only while nothing is buffered, so nothing is passed over.
        /// Otherwise keeps it, come at `arrival`, as `limit` says.
        mutating func receive(_ element: Element, _ limit: Limit, at arrival: Duration) -> Received {
            guard let waiter else { return keep(Slot(element: element, arrival: arrival), limit) ? .kept : .dropped }
            self.waiter = nil
            yielded += 1
            return .handed(waiter)
        }

        /// Keeps `element` as `limit` says; returns whether it was kept. (``Limit/recent(_:)`` keeps it here, and
        /// ``trim(_:at:)`` drops what has waited too long once the whole batch is in.)
        mutating func keep(_ element: Slot, _ limit: Limit) -> Bool {
            yielded += 1
            switch limit {
            case .unbounded, .recent: break
            case .newest(let capacity):
                guard capacity > 0 else {
                    dropped += 1
                    return false
                }
                if count >= capacity {
                    _ = takeFirst()
                    dropped += 1
                    buffer.append(element)
                    return false   // one fewer is waiting to be taken than were handed on
                }
            case .oldest(let capacity):
                if count >= capacity {
                    dropped += 1
                    return false
                }
            }
            buffer.append(element)
            return true
        }

        /// Drops, oldest first, what `bound` does not keep at `now`.
        mutating func trim(_ bound: BacklogBound, at now: Duration) {
            let excess = bound.excess(count: count, now: now) { buffer[head + $0].arrival }
            guard excess > 0 else { return }
            removeFirst(excess)
            dropped += excess
        }

        /// Ends the channel, unless it has ended: the handler to run, and the waiting consumer to resume with
        /// the end (it waits only while nothing is buffered).
        mutating func finish(_ result: Result<Void, Failure>) -> (
            handler: (@Sendable () -> Void)?, waiter: (UnsafeContinuation<Result<Element?, Failure>, Never>, Result<Element?, Failure>)?
        ) {
            guard end == nil else { return (nil, nil) }
            end = result
            defer { onTermination = nil }
            guard let waiter else { return (onTermination, nil) }
            self.waiter = nil
            return (onTermination, (waiter, takeEnd()))
        }

        /// What the consumer gets once the buffer is empty and the channel has ended: the end of the iteration,
        /// or its error, once (then the end).
        mutating func takeEnd() -> Result<Element?, Failure> {
            guard case .failure(let error) = end else { return .success(nil) }
            end = .success(())
            return .failure(error)
        }

        /// What the consumer gets now: an element, the end, or `nil` if it must wait.
        mutating func take() -> Result<Element?, Failure>? {
            if let element = takeFirst() { return .success(element) }
            return end == nil ? nil : takeEnd()
        }
    }

    /// The package's lock (``Locked``), not `Synchronization.Mutex`, whose futex waits ThreadSanitizer cannot see.
    private let state: Locked<State>
    /// What the buffer keeps once no replay waits for the consumer (a live gpsd's, always).
    private let limit: Limit
    /// What times the elements' waits, for ``Limit/recent(_:)``: the manager's clock.
    private let clock: any ManagerClock
    /// The consumer's account with a replay, which waits while it has too many elements not taken; `nil` live.
    let pacing: PacedConsumer?
    /// Told how many elements a send dropped.
    private let onDrop: (@Sendable (Int) -> Void)?

    /// - Parameters:
    ///   - limit: what to keep for a consumer that falls behind; a paced channel keeps everything.
    ///   - pacing: the consumer's account with a replay; `nil` for a live source.
    ///   - onDrop: told, after the lock is released, how many elements a send dropped (the manager's health).
    ///   - clock: what times the elements' waits for ``Limit/recent(_:)`` (the manager's; a manual one in tests).
    package init(
        limit: Limit, pacing: PacedConsumer? = nil, onDrop: (@Sendable (Int) -> Void)? = nil,
        clock: any ManagerClock = SystemManagerClock()
    ) {
        self.limit = limit
        self.clock = clock
        self.pacing = pacing
        self.onDrop = onDrop
        state = Locked(State(paced: pacing != nil))
    }

    /// What runs once when the channel ends, however it ends. Set it before anything can end the channel.
    package func onTermination(_ handler: @escaping @Sendable () -> Void) {
        state.withLock { $0.onTermination = handler }
    }

    /// How many elements the buffer dropped because the consumer had not taken them.
    package var droppedCount: Int { state.withLock { $0.dropped } }

    /// How many elements were handed to the channel, kept or dropped.
    package var yieldedCount: Int { state.withLock { $0.yielded } }

    /// How many elements are buffered, not yet taken: for tests.
    var bufferedCount: Int { state.withLock { $0.count } }

    /// Whether the consumer is suspended in ``next()``, waiting for an element or the end: for tests.
    var isWaiting: Bool { state.withLock { $0.waiter != nil } }

    /// How many times the consumer has suspended in ``next()`` so far: for tests.
    var suspensionCount: Int { state.withLock { $0.suspensions } }

    // MARK: The manager's side

    /// Appends `elements` under one lock and resumes the consumer once, if it waits, with the first; then, with
    /// `end`, ends the channel. An ended channel takes nothing more.
    package func send(_ elements: some Sequence<Element>, end: Result<Void, Failure>? = nil) {
        send(elements, end: end) { $0 }
    }

    /// ``send(_:end:)`` of what `transform` makes of `events` (those it makes `nil` of are left out), each made
    /// under the channel's lock, in order.
    package func send<Events: Sequence>(
        _ events: Events, end: Result<Void, Failure>?, _ transform: (Events.Element) -> Element?
    ) {
        typealias Waiter = (UnsafeContinuation<Result<Element?, Failure>, Never>, Result<Element?, Failure>)
        // Read before the lock: sends come from one thread at a time, and a later one is stamped no earlier anyway.
        let now: Duration = if case .recent = limit { clock.now } else { .zero }
        let (woken, handler, dropped) = state.withLock { state -> (Waiter?, (@Sendable () -> Void)?, Int) in
            guard state.end == nil else { return (nil, nil, 0) }
            let droppedBefore = state.dropped
            var received = false
            var woken: Waiter?
            let limit = state.paced ? .unbounded : self.limit
            let arrival = max(now, state.lastArrival)
            state.lastArrival = arrival
            for event in events {
                guard let element = transform(event) else { continue }
                received = true
                if case .handed(let waiter) = state.receive(element, limit, at: arrival) {
                    woken = (waiter, .success(element))
                }
            }
            if received, case .recent(let bound) = limit { state.trim(bound, at: arrival) }
            let dropped = state.dropped - droppedBefore
            // The buffer's depth, told the replay under the lock, so that its reports come in the order of changes.
            if received, state.paced { pacing?.buffered(state.count) }
            guard let end else { return (woken, nil, dropped) }
            let (handler, ended) = state.finish(end)
            return (woken ?? ended, handler, dropped)
        }
        handler?()
        if dropped > 0 { onDrop?(dropped) }
        guard let (waiter, result) = woken else { return }
        waiter.resume(returning: result)
    }

    /// Ends the channel without an error (``AsyncLocationManager/stop()``).
    package func finish() { send(EmptyCollection<Element>(), end: .success(())) }

    // MARK: The consumer's side

    /// The next element, `nil` at the end, or the error the channel ended with (once, then the end). Called by one
    /// task at a time, on `actor` (the caller's, so that taking an element never hops to another executor and
    /// back): a second task that waits while another does traps.
    func next(isolation actor: isolated (any Actor)?) async -> Result<Element?, Failure> {
        // A task cancelled before it asks ends the channel as one cancelled while it waits does: nothing more
        // comes, what is buffered still does (so does an AsyncThrowingStream's next()). Else a consumer that
        // always finds an element, behind a replay, would not see its cancellation until the replay ends.
        if Task.isCancelled { cancel() }
        // Nearly always, while fixes come faster than they are taken: one is there, and no suspension.
        if let ready = state.withLock({ take(&$0) }) { return ready }
        return await withTaskCancellationHandler {
            await withUnsafeContinuation(isolation: actor) { (continuation: UnsafeContinuation<Result<Element?, Failure>, Never>) in
                let ready = state.withLock { state -> Result<Element?, Failure>? in
                    if let ready = take(&state) { return ready }
                    // Another task's continuation in its place would never be resumed: that task would wait for
                    // ever. An AsyncThrowingStream traps here too.
                    precondition(state.waiter == nil, "attempt to await next() on more than one task")
                    state.waiter = continuation
                    state.suspensions += 1
                    return nil
                }
                guard let ready else { return }
                continuation.resume(returning: ready)
            }
        } onCancel: {
            // Swift's runtime runs this holding the task's status lock, which a thread resuming the task (the
            // session's, handing on a fix) waits for: the termination handler must not block (the manager
            // closes a session it gives back on a thread of its own).
            cancel()
        }
    }

    /// What the consumer gets now (``State/take()``), under the lock; a buffer an element left tells the replay its
    /// depth.
    private func take(_ state: inout State) -> Result<Element?, Failure>? {
        let ready = state.take()
        if case .success(.some) = ready, state.paced { pacing?.buffered(state.count) }
        return ready
    }

    /// The consumer has stopped iterating (its iterator is gone): a replay no longer waits for it, and what comes
    /// meanwhile is kept as the channel's limit says, for an iterator made later.
    func stopPacing() {
        guard let pacing else { return }
        state.withLock { $0.paced = false }
        pacing.leave()
    }

    /// Ends the channel for its consumer: its task was cancelled (it still gets what is buffered, then the end),
    /// or, `dropping` what is buffered, the sequence and its iterators are gone, and nobody can take it.
    func cancel(dropping: Bool = false) {
        let (handler, woken) = state.withLock { state in
            if dropping {
                state.buffer.removeAll()
                state.head = 0
            }
            return state.finish(.success(()))
        }
        handler?()
        if let (waiter, result) = woken { waiter.resume(returning: result) }
    }
}

/// Held by a sequence and every iterator of it: when the last goes, nobody can take from the channel any more,
/// and it ends (what `AsyncThrowingStream` does when it and its iterators go).
final class ChannelReference<Element: Sendable, Failure: Error>: Sendable {
    let channel: UpdateChannel<Element, Failure>

    init(_ channel: UpdateChannel<Element, Failure>) { self.channel = channel }

    deinit { channel.cancel(dropping: true) }
}

/// Held by an iterator and its copies: when the last goes, the consumer has stopped iterating, and a replay no
/// longer waits for it (the sequence, if kept, still buffers what comes, as a live gpsd's would: its ``UpdateChannel/Limit``).
final class ChannelIteration<Element: Sendable, Failure: Error>: Sendable {
    let reference: ChannelReference<Element, Failure>

    init(_ reference: ChannelReference<Element, Failure>) { self.reference = reference }

    deinit { reference.channel.stopPacing() }
}

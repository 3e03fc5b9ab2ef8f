import GPSDCore
import Synchronization

/// Fixes as they come, for one consumer: what ``AsyncLocationManager/updates(desiredAccuracy:distanceFilter:delivery:bufferingPolicy:)``
/// returns. An `AsyncSequence` that also counts the fixes its buffering policy dropped because the consumer
/// fell behind (from a live gpsd only: a replay waits for its consumers instead).
///
/// ```swift
/// let updates = gps.updates()
/// for try await fix in updates {
///     await slowWork(fix)
///     if updates.droppedCount > 0 { print("behind: \(updates.droppedCount) fixes dropped so far") }
/// }
/// ```
public struct LocationUpdates: AsyncSequence, Sendable {
    public typealias Element = Location
    public typealias Failure = any Error

    let stream: AsyncThrowingStream<Location, any Error>
    let counter: StreamCounter

    /// How many fixes were dropped so far because the consumer had not taken them when the buffer was full.
    /// Always 0 for a replay.
    public var droppedCount: Int { counter.droppedCount }

    /// How many fixes the manager handed to the sequence so far, kept or dropped: for tests.
    package var yieldedCount: Int { counter.yieldedCount }

    /// Iterates the fixes.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<Location, any Error>.AsyncIterator
        let iteration: StreamIteration

        public mutating func next() async throws -> Location? {
            guard let fix = try await base.next() else { return nil }
            iteration.counter.took()
            return fix
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: stream.makeAsyncIterator(), iteration: StreamIteration(counter))
    }
}

/// What a stream of fixes or updates counts where they are yielded and taken: those its buffer dropped, and, in a
/// replay, those not yet taken, for the replay to wait while the consumer is behind (``PacedConsumer``).
package final class StreamCounter: Sendable {
    private let dropped = Atomic(0)
    private let yielded = Atomic(0)
    private let pacing: PacedConsumer?

    /// - Parameter pacing: the consumer's account with a replay; `nil` for a live source.
    package init(pacing: PacedConsumer? = nil) { self.pacing = pacing }

    package var droppedCount: Int { dropped.load(ordering: .relaxed) }

    package var yieldedCount: Int { yielded.load(ordering: .relaxed) }

    /// Counts what yielding an element to the stream did: kept (and for a replay, not yet taken), or one dropped
    /// because the buffer was full (only a live source's policy drops). An ended stream takes nothing.
    package func yielded<Element>(_ result: AsyncThrowingStream<Element, any Error>.Continuation.YieldResult) {
        if case .terminated = result { return }
        yielded.add(1, ordering: .relaxed)
        if case .dropped = result {
            dropped.add(1, ordering: .relaxed)
        } else {
            pacing?.handedOn()
        }
    }

    /// The consumer took an element.
    func took() { pacing?.took() }

    /// The consumer takes nothing more: it stopped iterating, or the stream ended.
    func leave() { pacing?.leave() }
}

/// Held by a stream's iterator and its copies: when the last goes, the consumer has stopped iterating, and a replay
/// no longer waits for it (the stream, if kept, still buffers what comes).
final class StreamIteration: Sendable {
    let counter: StreamCounter

    init(_ counter: StreamCounter) { self.counter = counter }

    deinit { counter.leave() }
}

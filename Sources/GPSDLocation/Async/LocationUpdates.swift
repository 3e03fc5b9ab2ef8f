import GPSDCore
import Synchronization

/// Fixes as they come, for one consumer: what ``AsyncLocationManager/updates(desiredAccuracy:distanceFilter:delivery:bufferingPolicy:)``
/// returns. An `AsyncSequence` that also counts the fixes its buffering policy dropped because the consumer
/// fell behind.
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
    let drops: DropCounter

    /// How many fixes were dropped so far because the consumer had not taken them when the buffer was full.
    public var droppedCount: Int { drops.count }

    /// Iterates the fixes.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<Location, any Error>.AsyncIterator

        public mutating func next() async throws -> Location? { try await base.next() }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: stream.makeAsyncIterator()) }
}

/// The number of fixes a stream's buffer dropped, counted where the fixes are yielded.
package final class DropCounter: Sendable {
    private let dropped = Atomic(0)

    package init() {}

    package var count: Int { dropped.load(ordering: .relaxed) }

    package func add() { dropped.add(1, ordering: .relaxed) }
}

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

    let reference: ChannelReference<Location>

    init(_ channel: UpdateChannel<Location>) { reference = ChannelReference(channel) }

    /// How many fixes were dropped so far because the consumer had not taken them when the buffer was full.
    /// Always 0 for a replay.
    public var droppedCount: Int { reference.channel.droppedCount }

    /// How many fixes the manager handed to the sequence so far, kept or dropped: for tests.
    package var yieldedCount: Int { reference.channel.yieldedCount }

    /// Iterates the fixes.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let iteration: ChannelIteration<Location>

        public mutating func next() async throws -> Location? {
            try await iteration.reference.channel.next(isolation: #isolation)
        }

        /// The next fix, taken on the caller's actor: no hop to another executor and back for each.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(any Error) -> Location? {
            try await iteration.reference.channel.next(isolation: actor)
        }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(iteration: ChannelIteration(reference)) }
}

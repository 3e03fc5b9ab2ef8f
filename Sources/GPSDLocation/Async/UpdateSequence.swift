import GPSDCore

/// What every stream of an ``AsyncLocationManager`` is: fixes (``LocationUpdates``), a live timeline
/// (``LiveUpdates``), headings (``HeadingUpdates``), status (``StatusUpdates``) and satellites
/// (``SatelliteUpdates``). An `AsyncSequence` for one consumer, that also counts what its buffering dropped because
/// the consumer fell behind (from a live gpsd only: a replay waits for its consumers instead).
///
/// Every one ends the same ways, and none holds anything back once its consumer stops: when the consumer's task is
/// cancelled, the stream ends (the consumer still gets what was buffered, then the end); when its iterator goes, a
/// replay stops waiting for it at once, even if the sequence itself is kept (what comes meanwhile is kept as a live
/// gpsd's would be, for an iterator made later); when the sequence and its iterators are gone, the stream ends and
/// what it held is dropped.
///
/// ## What a live gpsd's stream keeps
/// A live gpsd cannot wait for a consumer that falls behind, and after a stall it sends its backlog in one burst
/// (an 8 s stall of a 10 Hz receiver: 80 epochs at once). Unless told otherwise (a `bufferingPolicy` means what it
/// says), a stream bounds what its consumer has not taken by how long it has waited, so that a consumer that keeps
/// up gets all of a burst and one that does not holds bounded memory:
/// - the newest 16 are kept, whatever their age;
/// - beyond them, an element is kept while it has waited 2 seconds or less since the manager handed it on; one that
///   has waited longer is dropped, oldest first, when a newer one comes;
/// - never more than 1024 are kept: beyond that the oldest are dropped, whatever their age.
///
/// A consumer that takes each element within 2 s of its coming loses none of a burst of up to 1024. One that never
/// reads holds the newest 16 or what came in the last 2 s, whichever is more (about 20 fixes at 10 Hz), and at most
/// 1024. It never drops what `.bufferingNewest(16)` would keep. What is dropped is counted in ``droppedCount``, and
/// for fixes, timelines and headings in the manager's ``LocationHealth/streamDrops`` too.
///
/// ```swift
/// let updates = gps.updates()
/// for try await fix in updates {
///     await slowWork(fix)
///     if updates.droppedCount > 0 { print("behind: \(updates.droppedCount) fixes dropped so far") }
/// }
/// ```
public struct UpdateSequence<Element: Sendable, Failure: Error>: AsyncSequence, Sendable {
    let reference: ChannelReference<Element, Failure>

    init(_ channel: UpdateChannel<Element, Failure>) { reference = ChannelReference(channel) }

    /// How many elements were dropped so far because the consumer had not taken them in time (what the stream keeps:
    /// above).
    /// Always 0 for a replay the consumer is iterating. A condition told once (``LocationUpdate/sourceRestarted``,
    /// a ``LocationUpdate/rejection`` beginning) can be among a timeline's: a consumer that falls behind should read
    /// the conditions of the update it gets, and this count.
    public var droppedCount: Int { reference.channel.droppedCount }

    /// How many elements the manager handed to the sequence so far, kept or dropped: for tests.
    package var yieldedCount: Int { reference.channel.yieldedCount }

    /// Iterates the elements.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let iteration: ChannelIteration<Element, Failure>

        public mutating func next() async throws(Failure) -> Element? {
            try await iteration.reference.channel.next(isolation: #isolation).get()
        }

        /// The next element, taken on the caller's actor: no hop to another executor and back for each.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(Failure) -> Element? {
            try await iteration.reference.channel.next(isolation: actor).get()
        }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(iteration: ChannelIteration(reference)) }
}

/// Fixes as they come, for one consumer: what ``AsyncLocationManager/updates(desiredAccuracy:distanceFilter:delivery:bufferingPolicy:)``
/// returns. It ends by throwing the ``LocationError`` of a fatal failure, or normally.
public typealias LocationUpdates = UpdateSequence<Location, any Error>

/// A live timeline: what ``AsyncLocationManager/liveUpdates(desiredAccuracy:distanceFilter:bufferingPolicy:)``
/// returns, ``LocationUpdate`` values in the order the manager decided them.
public typealias LiveUpdates = UpdateSequence<LocationUpdate, any Error>

/// Headings as they come, for one consumer: what ``AsyncLocationManager/headingUpdates(filter:bufferingPolicy:)``
/// returns.
public typealias HeadingUpdates = UpdateSequence<Heading, any Error>

/// The manager's status, the current one first, then each change: what ``AsyncLocationManager/statusUpdates()``
/// returns. It never throws.
public typealias StatusUpdates = UpdateSequence<LocationStatus, Never>

/// The satellites the receiver reports, as they change: what ``AsyncLocationManager/satelliteUpdates()`` returns.
/// It never throws.
public typealias SatelliteUpdates = UpdateSequence<SkyView, Never>

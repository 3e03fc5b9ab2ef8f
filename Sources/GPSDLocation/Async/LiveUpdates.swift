import GPSDCore
import GPSDSystem
import Synchronization

/// A live timeline: what ``AsyncLocationManager/liveUpdates(desiredAccuracy:distanceFilter:bufferingPolicy:)``
/// returns. An `AsyncSequence` of ``LocationUpdate`` values in the order the manager decided them, that also counts
/// the updates its buffering policy dropped because the consumer fell behind.
public struct LiveUpdates: AsyncSequence, Sendable {
    public typealias Element = LocationUpdate
    public typealias Failure = any Error

    let stream: AsyncThrowingStream<LocationUpdate, any Error>
    let drops: DropCounter

    /// How many updates were dropped so far because the consumer had not taken them when the buffer was full. A
    /// condition told once (``LocationUpdate/sourceRestarted``, a ``LocationUpdate/rejection`` beginning) can be
    /// among them: a consumer that falls behind should read the conditions of the update it gets, and this count.
    public var droppedCount: Int { drops.count }

    /// Iterates the updates.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<LocationUpdate, any Error>.AsyncIterator

        public mutating func next() async throws -> LocationUpdate? { try await base.next() }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: stream.makeAsyncIterator()) }
}

extension StreamOutlet {
    /// A live timeline: each event folded into the next ``LocationUpdate`` (``LiveTimeline``) and yielded (one its
    /// buffer drops is counted in `drops`); an end finishes it.
    static func timeline(
        _ continuation: AsyncThrowingStream<LocationUpdate, any Error>.Continuation, drops: DropCounter
    ) -> StreamOutlet {
        // One thread passes a stream's events at a time; the lock only makes that visible to the compiler.
        let timeline = Mutex(LiveTimeline())
        return StreamOutlet(
            pass: { event in
                switch event {
                case .ended(let error?): continuation.finish(throwing: error)
                case .ended(nil): continuation.finish()
                case .location, .rejected, .rejectionEnded, .status:
                    guard let update = timeline.withLock({ $0.update(for: event) }) else { return }
                    if case .dropped = continuation.yield(update) { drops.add() }
                }
            },
            finish: { continuation.finish() })
    }
}

extension AsyncLocationManager {
    /// The default buffering of ``liveUpdates(desiredAccuracy:distanceFilter:bufferingPolicy:)``: the newest 16
    /// updates.
    public static let defaultTimelineBufferingPolicy: AsyncThrowingStream<LocationUpdate, any Error>.Continuation.BufferingPolicy =
        .bufferingNewest(16)

    /// One timeline of fixes and conditions: a ``LocationUpdate`` for every fix that passes the filters and for every
    /// change of the manager's status, in the order the manager decided them, the status now first. Each carries the
    /// newest fix with its age, the status, and whether the fix is stale, unavailable, at rest, or from a source that
    /// restarted: what `CLLocationUpdate.liveUpdates()` gives an Apple app.
    ///
    /// The timeline holds a subscription of the manager as ``updates(desiredAccuracy:distanceFilter:delivery:bufferingPolicy:)``
    /// does, and goes on through reconnections (the status says them); a fatal failure ends it by throwing a
    /// ``LocationError``, the end of a recording ends it normally, and so do ending the iteration, cancelling its
    /// task, and ``stop()``.
    ///
    /// ```swift
    /// for try await update in gps.liveUpdates(desiredAccuracy: 10) {
    ///     guard let fix = update.location, !update.isStale else { robot.hold(); continue }
    ///     robot.steer(towards: fix.coordinate)
    /// }
    /// ```
    /// - Parameters:
    ///   - desiredAccuracy: only fixes at least this accurate (metres); `nil` takes any. Fixes that fall short for the
    ///     manager's ``LocationManager/staleTimeout`` make an update with ``LocationUpdate/rejection``.
    ///   - distanceFilter: only fixes at least this far (metres) from the last one delivered.
    ///   - bufferingPolicy: what to keep for a consumer that falls behind; by default
    ///     ``defaultTimelineBufferingPolicy``, the newest 16.
    public func liveUpdates(
        desiredAccuracy: Double? = nil,
        distanceFilter: Double? = nil,
        bufferingPolicy: AsyncThrowingStream<LocationUpdate, any Error>.Continuation.BufferingPolicy =
            AsyncLocationManager.defaultTimelineBufferingPolicy
    ) -> LiveUpdates {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: LocationUpdate.self, bufferingPolicy: bufferingPolicy)
        let drops = DropCounter()
        let id = manager.reserveSubscription()
        // As for updates(): the termination handler first, since the stream can end before this returns.
        continuation.onTermination = { _ in
            self.state.withLock { $0.remove(id) }
            self.manager.unsubscribe(id)
        }
        state.withLock { $0.add(id, .timeline(continuation, drops: drops)) }
        manager.subscribe(id, .timeline(desiredAccuracy: desiredAccuracy, distanceFilter: distanceFilter), consumer: receiver)
        return LiveUpdates(stream: stream, drops: drops)
    }
}

import GPSDCore
import GPSDSystem
import Synchronization

extension StreamOutlet {
    /// A live timeline: each event folded into the next ``LocationUpdate`` (``LiveTimeline``), the updates of each
    /// batch sent to `channel` together; an end finishes it.
    static func timeline(_ channel: UpdateChannel<LocationUpdate, any Error>) -> StreamOutlet {
        // One thread passes a stream's events at a time; the lock only makes that visible to the compiler.
        let timeline = Mutex(LiveTimeline())
        return StreamOutlet(
            pass: { events in
                // Folded under the channel's lock, in order; the consumer is resumed after both locks.
                channel.send(events, end: events.last?.end) { event in
                    if case .ended = event { return nil }
                    return timeline.withLock { $0.update(for: event) }
                }
            },
            finish: { channel.finish() })
    }
}

extension AsyncLocationManager {
    /// The default buffering of ``liveUpdates(desiredAccuracy:distanceFilter:bufferingPolicy:)`` from a live gpsd: the
    /// newest 16 updates. (A replay waits for its consumers instead, and drops nothing.)
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
    /// task, and ``stop()``. A replay waits for the timeline's consumer rather than drop anything, as it does for
    /// ``updates(desiredAccuracy:distanceFilter:delivery:bufferingPolicy:)``; `bufferingPolicy` applies to a live gpsd.
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
    ///   - bufferingPolicy: what to keep from a live gpsd for a consumer that falls behind; by default
    ///     ``defaultTimelineBufferingPolicy``, the newest 16. A replay keeps everything, and waits.
    public func liveUpdates(
        desiredAccuracy: Double? = nil,
        distanceFilter: Double? = nil,
        bufferingPolicy: AsyncThrowingStream<LocationUpdate, any Error>.Continuation.BufferingPolicy =
            AsyncLocationManager.defaultTimelineBufferingPolicy
    ) -> LiveUpdates {
        LiveUpdates(subscribed(
            .timeline(desiredAccuracy: desiredAccuracy, distanceFilter: distanceFilter), limit: .init(bufferingPolicy),
            outlet: StreamOutlet.timeline))
    }
}

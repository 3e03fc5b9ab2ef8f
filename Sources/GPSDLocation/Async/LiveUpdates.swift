import GPSDCore

extension AsyncLocationManager {
    /// What ``liveUpdates(desiredAccuracy:distanceFilter:bufferingPolicy:)`` kept by default before its default kept
    /// a burst for a consumer that keeps up: the newest 16 updates, whatever came at once.
    @available(*, deprecated, message: "Leave bufferingPolicy out (nil) for the default, which keeps the newest 16 and any update that waited 2 s or less, at most 1024; .bufferingNewest(16) still keeps only the newest 16")
    public static let defaultTimelineBufferingPolicy: AsyncThrowingStream<LocationUpdate, any Error>.Continuation.BufferingPolicy =
        .bufferingNewest(16)

    /// One timeline of fixes and conditions: a ``LocationUpdate`` for every fix that passes the filters and for every
    /// change of the manager's status, in the order the manager decided them, the status now first. Each carries the
    /// newest fix with its age, the status, and whether the fix is stale, unavailable, at rest, or from a source that
    /// restarted: what `CLLocationUpdate.liveUpdates()` gives an Apple app. Rest is judged by the manager's
    /// ``LocationManager/stationaryDetection`` as it is when the timeline is made (``StationaryDetector`` states the
    /// rule and its defaults).
    ///
    /// The timeline holds a subscription of the manager as ``updates(desiredAccuracy:distanceFilter:delivery:bufferingPolicy:)``
    /// does, and goes on through reconnections (the status says them); a fatal failure ends it by throwing a
    /// ``LocationError``, the end of a recording ends it normally, and so do ending the iteration, cancelling its
    /// task, and ``stop()``. A replay waits for the timeline's consumer rather than drop anything, as it does for
    /// ``updates(desiredAccuracy:distanceFilter:delivery:bufferingPolicy:)``; `bufferingPolicy` applies to a live gpsd,
    /// and by default keeps what it does for fixes (the rule: ``UpdateSequence``).
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
    ///   - bufferingPolicy: what to keep from a live gpsd for a consumer that falls behind: a policy means what it
    ///     says; `nil`, the default, keeps the newest 16 updates and any that has waited 2 s or less, at most 1024.
    ///     A replay keeps everything, and waits.
    public func liveUpdates(
        desiredAccuracy: Double? = nil,
        distanceFilter: Double? = nil,
        bufferingPolicy: AsyncThrowingStream<LocationUpdate, any Error>.Continuation.BufferingPolicy? = nil
    ) -> LiveUpdates {
        let stationary = manager.stationaryDetection
        return LiveUpdates(subscribed(
            .timeline(desiredAccuracy: desiredAccuracy, distanceFilter: distanceFilter), limit: .init(bufferingPolicy),
            outlet: { StreamOutlet.timeline($0, stationary: stationary) }))
    }
}

import GPSDCore

extension AsyncLocationManager {
    /// What ``headingUpdates(filter:bufferingPolicy:)`` kept by default before its default kept a burst for a
    /// consumer that keeps up: the newest 16 headings, whatever came at once.
    @available(*, deprecated, message: "Leave bufferingPolicy out (nil) for the default, which keeps the newest 16 and any heading that waited 2 s or less, at most 1024; .bufferingNewest(16) still keeps only the newest 16")
    public static let defaultHeadingBufferingPolicy: AsyncThrowingStream<Heading, any Error>.Continuation.BufferingPolicy =
        .bufferingNewest(16)

    /// Headings as gpsd reports them (its ATT reports), each that differs by at least `filter` degrees from the
    /// last this sequence delivered, until the consumer stops iterating, its task is cancelled, or ``stop()`` is
    /// called.
    ///
    /// The sequence holds a subscription of the manager, which watches gpsd while it lasts, as
    /// ``updates(desiredAccuracy:distanceFilter:delivery:bufferingPolicy:)`` does: it goes on through
    /// reconnections, a fatal failure ends it by throwing a ``LocationError``, the end of a recording ends it
    /// normally. A replay waits for its consumer rather than drop a heading; `bufferingPolicy` applies to a live
    /// gpsd. Course over ground is never passed off as a heading: a receiver without a heading sensor gives none
    /// (<doc:HeadingSources> says which gpsd releases report which receivers' headings).
    ///
    /// ```swift
    /// for try await heading in gps.headingUpdates(filter: 5) {
    ///     robot.turn(to: heading.trueHeading)
    /// }
    /// ```
    /// - Parameters:
    ///   - filter: degrees a heading must differ from the last delivered (350° and 10° differ by 20°); `nil` or 0
    ///     delivers every one. 1 by default, as CoreLocation's `headingFilter`.
    ///   - bufferingPolicy: what to keep from a live gpsd for a consumer that falls behind: a policy means what it
    ///     says; `nil`, the default, keeps the newest 16 headings and any that has waited 2 s or less, at most 1024
    ///     (the rule: ``UpdateSequence``). A replay keeps everything, and waits.
    public func headingUpdates(
        filter: Double? = 1,
        bufferingPolicy: AsyncThrowingStream<Heading, any Error>.Continuation.BufferingPolicy? = nil
    ) -> HeadingUpdates {
        HeadingUpdates(subscribed(.headings(filter: filter), limit: .init(bufferingPolicy), outlet: StreamOutlet.headings))
    }
}

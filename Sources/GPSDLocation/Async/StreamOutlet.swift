import GPSDCore

/// The consumer of one stream's subscription: the manager hands it the stream's notices, in the order decided and
/// one batch at a time (``SubscriptionConsumer``), and it passes them to the stream's channel: a sequence of fixes
/// (``AsyncLocationManager/updates(desiredAccuracy:distanceFilter:delivery:bufferingPolicy:)``), of headings, or a
/// live timeline (``AsyncLocationManager/liveUpdates(desiredAccuracy:distanceFilter:bufferingPolicy:)``).
package final class StreamOutlet: SubscriptionConsumer {
    /// Passes notices on, in order, all at once; an end (the last, if any) finishes the sequence.
    private let pass: @Sendable ([SubscriptionNotice]) -> Void
    /// Finishes the sequence without an error (``AsyncLocationManager/stop()``).
    package let finish: @Sendable () -> Void

    package init(pass: @escaping @Sendable ([SubscriptionNotice]) -> Void, finish: @escaping @Sendable () -> Void) {
        self.pass = pass
        self.finish = finish
    }

    package func receive(_ notices: [SubscriptionNotice]) { pass(notices) }

    /// A sequence of fixes: the fixes of each batch go to `channel` together, an end finishes it, and what only a
    /// timeline follows (status, rejections) is left out.
    package static func fixes(_ channel: UpdateChannel<Location, any Error>) -> StreamOutlet {
        elements(channel) { event in
            guard case .location(let location) = event else { return nil }
            return location
        }
    }

    /// A sequence of headings: the headings of each batch go to `channel` together, an end finishes it.
    package static func headings(_ channel: UpdateChannel<Heading, any Error>) -> StreamOutlet {
        elements(channel) { event in
            guard case .heading(let heading) = event else { return nil }
            return heading
        }
    }

    /// A sequence of what `element` takes from each event: each batch's go to `channel` together, an end finishes it.
    private static func elements<Element>(
        _ channel: UpdateChannel<Element, any Error>, _ element: @escaping @Sendable (SubscriptionEvent) -> Element?
    ) -> StreamOutlet {
        StreamOutlet(
            pass: { notices in channel.send(notices, end: notices.last?.event.end) { element($0.event) } },
            finish: { channel.finish() })
    }
}

extension SubscriptionEvent {
    /// How a sequence ends with this event, if it is an end: normally, or with the error.
    var end: Result<Void, any Error>? {
        guard case .ended(let error) = self else { return nil }
        return error.map { .failure($0) } ?? .success(())
    }
}

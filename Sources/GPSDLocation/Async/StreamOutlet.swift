import GPSDCore

/// Where a stream's events go once they are in the order decided: a sequence of fixes
/// (``AsyncLocationManager/updates(desiredAccuracy:distanceFilter:delivery:bufferingPolicy:)``) or a live timeline
/// (``AsyncLocationManager/liveUpdates(desiredAccuracy:distanceFilter:)``). Called by one thread at a time per stream
/// (``AsyncLocationStateMachine/settle(_:)``), never under the async bridge's lock.
package struct StreamOutlet: Sendable {
    /// Passes events on, in order, all at once; an end (the last, if any) finishes the sequence.
    package let pass: @Sendable ([SubscriptionEvent]) -> Void
    /// Finishes the sequence without an error (``AsyncLocationManager/stop()``).
    package let finish: @Sendable () -> Void

    package init(pass: @escaping @Sendable ([SubscriptionEvent]) -> Void, finish: @escaping @Sendable () -> Void) {
        self.pass = pass
        self.finish = finish
    }

    /// A sequence of fixes: the fixes of each batch go to `channel` together, an end finishes it, and what only a
    /// timeline follows (status, rejections) is left out.
    package static func fixes(_ channel: UpdateChannel<Location, any Error>) -> StreamOutlet {
        StreamOutlet(
            pass: { events in
                channel.send(events, end: events.last?.end) { event in
                    guard case .location(let location) = event else { return nil }
                    return location
                }
            },
            finish: { channel.finish() })
    }

    /// A sequence of headings: the headings of each batch go to `channel` together, an end finishes it.
    package static func headings(_ channel: UpdateChannel<Heading, any Error>) -> StreamOutlet {
        StreamOutlet(
            pass: { events in
                channel.send(events, end: events.last?.end) { event in
                    guard case .heading(let heading) = event else { return nil }
                    return heading
                }
            },
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

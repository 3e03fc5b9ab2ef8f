import GPSDCore

/// Where a stream's events go once they are in the order decided: a sequence of fixes
/// (``AsyncLocationManager/updates(desiredAccuracy:distanceFilter:delivery:bufferingPolicy:)``) or a live timeline
/// (``AsyncLocationManager/liveUpdates(desiredAccuracy:distanceFilter:)``). Called by one thread at a time per stream
/// (``AsyncLocationStateMachine/settle(_:)``), never under the async bridge's lock.
package struct StreamOutlet: Sendable {
    /// Passes one event on; an end finishes the sequence.
    package let pass: @Sendable (SubscriptionEvent) -> Void
    /// Finishes the sequence without an error (``AsyncLocationManager/stop()``).
    package let finish: @Sendable () -> Void

    package init(pass: @escaping @Sendable (SubscriptionEvent) -> Void, finish: @escaping @Sendable () -> Void) {
        self.pass = pass
        self.finish = finish
    }

    /// A sequence of fixes: each fix yielded and counted in `counter` (one its buffer drops, or, in a replay, one
    /// not yet taken), an end finishes it, and what only a timeline follows (status, rejections) is left out.
    package static func fixes(
        _ continuation: AsyncThrowingStream<Location, any Error>.Continuation, counter: StreamCounter
    ) -> StreamOutlet {
        StreamOutlet(
            pass: { event in
                switch event {
                case .location(let location): counter.yielded(continuation.yield(location))
                case .ended(let error?): continuation.finish(throwing: error)
                case .ended(nil): continuation.finish()
                case .rejected, .rejectionEnded, .status: break
                }
            },
            finish: { continuation.finish() })
    }
}

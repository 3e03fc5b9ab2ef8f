import GPSDCore
import GPSDSystem

extension GeofenceMonitor {
    /// The events decided from now on, for one consumer: each call makes a new sequence.
    ///
    /// The sequence gets every event decided after this returns (initial states of regions added later, and
    /// changes), in the order they were decided, and ends when ``finish()`` is called, when the monitor is
    /// released, or when the consumer's task is cancelled. It does not replay the past: read ``regions`` and
    /// ``state(of:)`` for the present.
    ///
    /// ```swift
    /// for await event in monitor.events() {
    ///     print(event.identifier, event.previousState, "→", event.state)
    /// }
    /// ```
    /// - Parameter bufferingPolicy: what to keep for a consumer that falls behind; by default the newest 64
    ///   events (an older one dropped leaves a gap that ``GeofenceEvent/previousState`` shows).
    public func events(
        bufferingPolicy: AsyncStream<Event>.Continuation.BufferingPolicy = .bufferingNewest(64)
    ) -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: bufferingPolicy)
        let id = state.withLock { state -> Int? in
            guard !state.isFinished else { return nil }
            defer { state.nextSubscriberID += 1 }
            state.subscribers.append((state.nextSubscriberID, continuation))
            return state.nextSubscriberID
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        // Weakly: a sequence does not keep its monitor alive, so releasing the monitor ends the sequence.
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { $0.subscribers.removeAll { $0.id == id } }
        }
        return stream
    }

    /// Feeds every fix of `fixes` to ``process(_:)``, until the sequence ends, the task is cancelled, or
    /// ``finish()`` is called (noticed at the next fix).
    ///
    /// Regions may be added and removed meanwhile, from anywhere.
    ///
    /// ```swift
    /// let gps = AsyncLocationManager()
    /// try await monitor.monitor(gps.updates(desiredAccuracy: 30))
    /// ```
    /// - Throws: what the sequence throws (a ``LocationError`` from a manager's updates).
    public func monitor<S: AsyncSequence>(_ fixes: S) async throws where S.Element == Location {
        for try await fix in fixes {
            guard !Task.isCancelled, !isFinished else { return }
            process(fix)
        }
    }

    /// Whether ``finish()`` was called.
    public var isFinished: Bool { state.withLock { $0.isFinished } }

    /// Ends every event sequence, after the events already decided, and stops taking fixes: ``process(_:)``
    /// ignores them, ``monitor(_:)`` returns, ``events(bufferingPolicy:)`` returns a sequence already ended, and the
    /// delegate hears nothing more. Regions and their states stay readable. Calling it again does nothing.
    ///
    /// ```swift
    /// monitor.finish()
    /// ```
    public func finish() {
        let deliverHere = state.withLock { state -> Bool in
            guard !state.isFinished else { return false }
            state.isFinished = true
            state.outbox.append(.finish(state.subscribers))
            state.subscribers = []
            return state.outbox.claim()
        }
        if deliverHere { deliver() }
    }
}

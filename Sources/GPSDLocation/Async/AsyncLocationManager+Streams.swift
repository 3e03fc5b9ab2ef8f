import GPSDCore
import GPSDSystem

extension AsyncLocationManager {
    /// Fixes as they come, until the consumer stops iterating, its task is
    /// cancelled, or ``stop()`` is called.
    ///
    /// Each call makes an independent sequence with its own filters and its own subscription of the manager,
    /// which watches gpsd until the last is gone. A connection that fails or cannot be made is retried under the
    /// manager's ``LocationManager/reconnectPolicy``, from the first attempt, and the sequence goes on (follow
    /// ``statusUpdates()`` to see it); a fatal failure (reconnection turned off or given up, gpsd refusing the
    /// device) ends it by throwing a ``LocationError``; the end of a recording ends it normally. Fixes dropped
    /// because the consumer fell behind are counted in ``LocationUpdates/droppedCount``.
    ///
    /// ```swift
    /// for try await fix in gps.updates(desiredAccuracy: 20, distanceFilter: 10) {
    ///     log(fix)
    /// }
    /// ```
    /// - Parameters:
    ///   - desiredAccuracy: only fixes at least this accurate (metres); `nil` takes any.
    ///   - distanceFilter: only fixes at least this far (metres) from the last one delivered.
    ///   - delivery: each epoch as its reports come (``EpochDelivery/asReported``, the default: a fix again
    ///     when a later report of its epoch adds a value), or once, complete, when it is over
    ///     (``EpochDelivery/oncePerEpoch``: what a logger wants).
    ///   - bufferingPolicy: what to keep for a consumer that falls behind; by default
    ///     ``defaultBufferingPolicy``, the newest 16.
    public func updates(
        desiredAccuracy: Double? = nil,
        distanceFilter: Double? = nil,
        delivery: EpochDelivery = .asReported,
        bufferingPolicy: AsyncThrowingStream<Location, any Error>.Continuation.BufferingPolicy =
            AsyncLocationManager.defaultBufferingPolicy
    ) -> LocationUpdates {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: Location.self, bufferingPolicy: bufferingPolicy)
        let drops = DropCounter()
        let id = manager.reserveSubscription()
        // The termination handler goes in first: the stream can end (stop(), a failure) before this returns.
        // It holds this object strongly, so a sequence outlives the manager value it came from; the cycle
        // ends with the sequence.
        continuation.onTermination = { _ in
            self.state.withLock { $0.remove(id) }
            self.manager.unsubscribe(id)
        }
        state.withLock { $0.add(id, .fixes(continuation, drops: drops)) }
        manager.subscribe(
            id, .continuous(desiredAccuracy: desiredAccuracy, distanceFilter: distanceFilter, delivery: delivery),
            consumer: receiver)
        return LocationUpdates(stream: stream, drops: drops)
    }

    /// The satellites the receiver reports seeing and using, as they change, while fixes are being watched
    /// (by a request, a stream or the delegate API). Observing does not by itself start the gpsd watch. The
    /// sequence ends with ``stop()``, or when this manager value is released.
    ///
    /// ```swift
    /// for await sky in gps.satelliteUpdates() { print("\(sky.used)/\(sky.visible) satellites") }
    /// ```
    public func satelliteUpdates() -> AsyncStream<SatelliteCount> {
        observations(startingWithStatus: false, keeping: 1) { event in
            guard case .satellites(let count) = event else { return nil }
            return count
        }
    }

    /// The manager's ``LocationManager/status``: the current one first, then each change (connecting,
    /// connected, waiting for a fix, fix lost, stale, reconnecting, …), in the order they happened. A consumer
    /// that falls more than 16 changes behind loses the oldest. Observing does not by itself start the gpsd
    /// watch. The sequence ends with ``stop()``, or when this manager value is released.
    ///
    /// ```swift
    /// for await status in gps.statusUpdates() { print("gps:", status) }
    /// ```
    public func statusUpdates() -> AsyncStream<LocationStatus> {
        observations(startingWithStatus: true, keeping: 16) { event in
            guard case .status(let status) = event else { return nil }
            return status
        }
    }

    /// A stream of what `select` takes from the manager's observations, in the order the manager decided them
    /// (one decided earlier but arriving later is dropped), each value once in a row, the newest `keeping` of
    /// them buffered; with `startingWithStatus`, the status at registration first.
    private func observations<Value: Sendable & Equatable>(
        startingWithStatus: Bool, keeping: Int, _ select: @escaping @Sendable (ManagerEvent) -> Value?
    ) -> AsyncStream<Value> {
        let (stream, continuation) = AsyncStream.makeStream(of: Value.self, bufferingPolicy: .bufferingNewest(keeping))
        let last = Locked<(sequence: UInt64, value: Value?)>((0, nil))
        // Yields under the lock (it does not block), so that the order of yields is the order of decisions.
        let yieldIfNewer: @Sendable (Observation) -> Void = { observation in
            guard let value = select(observation.event) else { return }
            last.withLock { last in
                guard observation.sequence > last.sequence else { return }
                let changed = last.value != value
                last = (observation.sequence, value)
                if changed { continuation.yield(value) }
            }
        }
        let registration = manager.addObserver(yieldIfNewer)
        if startingWithStatus { yieldIfNewer(registration.status) }
        // Neither the manager nor this object is kept by the sequence: the manager keeps the observer, whose
        // continuation keeps this handler.
        continuation.onTermination = { [weak self, weak manager] _ in
            manager?.removeObserver(registration.id)
            self?.state.withLock { $0.removeObservation(registration.id) }
        }
        state.withLock { $0.add(observation: { continuation.finish() }, as: registration.id) }
        return stream
    }
}

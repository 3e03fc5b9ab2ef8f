extension AsyncLocationManager {
    /// Fixes as they come, one per receiver cycle, until the consumer stops iterating, its task is
    /// cancelled, or ``stop()`` is called.
    ///
    /// Each call makes an independent sequence with its own filters and its own subscription of the manager,
    /// which watches gpsd until the last is gone. A connection failure ends the sequence by throwing a
    /// ``LocationError``; the end of a recording ends it normally.
    ///
    /// ```swift
    /// for try await fix in gps.updates(desiredAccuracy: 20, distanceFilter: 10) {
    ///     log(fix)
    /// }
    /// ```
    /// - Parameters:
    ///   - desiredAccuracy: only fixes at least this accurate (metres); `nil` takes any.
    ///   - distanceFilter: only fixes at least this far (metres) from the last one delivered.
    ///   - bufferingPolicy: what to keep for a consumer that falls behind; by default
    ///     ``defaultBufferingPolicy``, the newest 16.
    public func updates(
        desiredAccuracy: Double? = nil,
        distanceFilter: Double? = nil,
        bufferingPolicy: AsyncThrowingStream<Location, any Error>.Continuation.BufferingPolicy =
            AsyncLocationManager.defaultBufferingPolicy
    ) -> AsyncThrowingStream<Location, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: Location.self, bufferingPolicy: bufferingPolicy)
        let id = manager.reserveSubscription()
        // The termination handler goes in first: the stream can end (stop(), a failure) before this returns.
        // It holds this object strongly, so a sequence outlives the manager value it came from; the cycle
        // ends with the sequence.
        continuation.onTermination = { _ in
            self.state.withLock { $0.remove(id) }
            self.manager.unsubscribe(id)
        }
        state.withLock { $0.add(id, continuation) }
        manager.subscribe(
            id, .continuous(desiredAccuracy: desiredAccuracy, distanceFilter: distanceFilter), consumer: receiver)
        return stream
    }

    /// The satellites the receiver reports seeing and using, as they change, while fixes are being watched
    /// (by a request, a stream or the delegate API). Observing does not by itself start the gpsd watch. The
    /// sequence ends with ``stop()``, or when this manager value is released.
    ///
    /// ```swift
    /// for await sky in gps.satelliteUpdates() { print("\(sky.used)/\(sky.visible) satellites") }
    /// ```
    public func satelliteUpdates() -> AsyncStream<SatelliteCount> {
        let (stream, continuation) = AsyncStream.makeStream(of: SatelliteCount.self, bufferingPolicy: .bufferingNewest(1))
        let last = Locked<SatelliteCount?>(nil)
        let observer = manager.addObserver { event in
            guard case .satellites(let count) = event else { return }
            let changed = last.withLock { last in
                defer { last = count }
                return last != count
            }
            if changed { continuation.yield(count) }
        }
        // Neither the manager nor this object is kept by the sequence: the manager keeps the observer, whose
        // continuation keeps this handler.
        continuation.onTermination = { [weak self, weak manager] _ in
            manager?.removeObserver(observer)
            self?.state.withLock { $0.removeSatellites(observer) }
        }
        state.withLock { $0.add(satellites: continuation, as: observer) }
        return stream
    }
}

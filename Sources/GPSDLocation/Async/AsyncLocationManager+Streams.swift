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
    /// device) ends it by throwing a ``LocationError``; the end of a recording ends it normally.
    ///
    /// A live gpsd cannot wait for a consumer that falls behind: the sequence keeps what `bufferingPolicy` says
    /// and counts the fixes it drops in ``UpdateSequence/droppedCount``. By default it keeps what a consumer that
    /// keeps up will take, and bounds what one that does not holds (the rule: ``UpdateSequence``): the newest 16
    /// fixes, and beyond them every fix that has waited 2 seconds or less, at most 1024. So the backlog gpsd sends
    /// in one burst after a stall reaches whole a consumer that takes each fix within 2 s.
    ///
    /// A replay waits instead, at any pace: it hands on no further report while this sequence (or any other
    /// consumer of the manager) has 16 fixes it has not taken, so the sequence drops nothing and buffers at most
    /// those and the fixes of one read of the recording; `bufferingPolicy` does not apply. A sequence paces the replay until it ends, its task is
    /// cancelled, or its iterator goes (then, if the sequence is kept, it buffers what comes without holding the
    /// replay back).
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
    ///   - bufferingPolicy: what to keep from a live gpsd for a consumer that falls behind: a policy means what it
    ///     says (`.bufferingNewest(16)`, the newest 16 whatever the burst); `nil`, the default, keeps the newest 16
    ///     and any fix that has waited 2 s or less, at most 1024. A replay keeps everything, and waits.
    public func updates(
        desiredAccuracy: Double? = nil,
        distanceFilter: Double? = nil,
        delivery: EpochDelivery = .asReported,
        bufferingPolicy: AsyncThrowingStream<Location, any Error>.Continuation.BufferingPolicy? = nil
    ) -> LocationUpdates {
        LocationUpdates(subscribed(
            .continuous(desiredAccuracy: desiredAccuracy, distanceFilter: distanceFilter, delivery: delivery),
            limit: .init(bufferingPolicy), outlet: StreamOutlet.fixes))
    }

    /// A channel for a new stream or timeline, subscribed with `request`: what a live gpsd's consumer that falls
    /// behind keeps is `limit`; a replay waits for the consumer instead (the channel keeps everything).
    func subscribed<Element>(
        _ request: SubscriptionRequest, limit: UpdateChannel<Element, any Error>.Limit,
        outlet: (UpdateChannel<Element, any Error>) -> StreamOutlet
    ) -> UpdateChannel<Element, any Error> {
        let channel = UpdateChannel<Element, any Error>(
            limit: limit, pacing: manager.backpressure?.join(), onDrop: { [manager] in manager.streamDropped($0) },
            clock: manager.clock)
        let id = manager.reserveSubscription()
        // The termination handler goes in first: the channel can end (stop(), a failure) before this returns. It
        // holds this object strongly, so a sequence outlives the manager value it came from; the cycle ends with
        // the channel. The replay stops waiting for it first: giving the subscription back may close the session,
        // which waits for the replay's thread.
        channel.onTermination { [pacing = channel.pacing] in
            pacing?.leave()
            // Given back before it leaves the state, so that a stop() between the two still settles its session.
            self.manager.unsubscribe(id)
            self.state.withLock { $0.remove(id) }
        }
        // The stream is its own consumer: the manager hands it its notices, in order, straight to its channel.
        let consumer = outlet(channel)
        // Registered before it subscribes, under the lock stop() takes: a stop that began first refuses it, and it
        // ends at once without a subscription; one that begins after finds it.
        guard state.withLock({ $0.add(id, consumer) }) else {
            channel.finish()
            return channel
        }
        manager.subscribe(id, request, consumer: consumer)
        return channel
    }

    /// The satellites each receiver sees, one whole view per receiver epoch: every satellite of every system with
    /// its place in the sky, its signal and whether the fix uses it, the counts (in all and per system,
    /// ``SkyView/constellations``) and the DOPs, stamped with the epoch's time, while fixes are being watched
    /// (by a request, a stream or the delegate API). gpsd reports an epoch's satellites in several SKYs (a system
    /// more in each); this gives the epoch's view once, when it is whole: at the epoch's last SKY once the
    /// receiver's last two epochs showed how many SKYs an epoch brings, otherwise when the next epoch begins.
    /// The first view of a session, or of a receiver gpsd gives back, is of an epoch seen from its start: the SKYs
    /// before (a session that joined gpsd mid-cycle, a receiver gpsd opened mid-cycle) are not passed on, and no
    /// view is stamped with the time of a fix from before. When the receiver goes, or loses its fix, an empty view
    /// of it follows (no satellites, counts 0), and ``LocationManager/sky`` becomes `nil`. Observing does not by
    /// itself start the gpsd watch. The sequence ends with ``stop()``, when this manager value is released, or as
    /// every stream does (``UpdateSequence``). From a live gpsd, it keeps for a consumer that falls behind what
    /// ``updates(desiredAccuracy:distanceFilter:delivery:bufferingPolicy:)`` keeps by default: the newest 16 views,
    /// and any that has waited 2 s or less, at most 1024; a replay waits for it instead, so it gets every view.
    ///
    /// ```swift
    /// for await sky in gps.satelliteUpdates() {
    ///     print("\(sky.used)/\(sky.visible) satellites:", sky.constellations.map { "\($0.constellation) \($0.used)" })
    /// }
    /// ```
    public func satelliteUpdates() -> SatelliteUpdates {
        observations(startingWithStatus: false) { event in
            guard case .satellites(let view) = event else { return nil }
            return view
        }
    }

    /// The manager's ``LocationManager/status``: the current one first, then each change (connecting,
    /// connected, waiting for a fix, fix lost, stale, reconnecting, …), in the order they happened. From a live
    /// gpsd, it keeps for a consumer that falls behind what ``updates(desiredAccuracy:distanceFilter:delivery:bufferingPolicy:)``
    /// keeps by default (the newest 16 changes, and any that has waited 2 s or less, at most 1024); a replay waits
    /// for it instead. Observing does not by itself start
    /// the gpsd watch. The sequence ends with ``stop()``, when this manager value is released, or as every stream
    /// does (``UpdateSequence``).
    ///
    /// ```swift
    /// for await status in gps.statusUpdates() { print("gps:", status) }
    /// ```
    public func statusUpdates() -> StatusUpdates {
        observations(startingWithStatus: true) { event in
            guard case .status(let status) = event else { return nil }
            return status
        }
    }

    /// A stream of what `select` takes from the manager's observations, in the order the manager decided them,
    /// each value once in a row, buffered as the streams are by default (a replay keeps all, and waits for the
    /// consumer); with `startingWithStatus`, the status at registration first.
    private func observations<Value: Sendable & Equatable>(
        startingWithStatus: Bool, _ select: @escaping @Sendable (ManagerEvent) -> Value?
    ) -> UpdateSequence<Value, Never> {
        let channel = UpdateChannel<Value, Never>(
            limit: .recent(.default), pacing: manager.backpressure?.join(), clock: manager.clock)
        // After stop(), nothing more is observed: the sequence ends at once, empty.
        if state.withLock({ $0.isStopped }) {
            channel.onTermination { [pacing = channel.pacing] in pacing?.leave() }
            channel.finish()
            return UpdateSequence(channel)
        }
        // The manager calls an observer one call at a time: the lock only makes that visible to the compiler.
        let last = Locked<Value?>(nil)
        let sendIfChanged: @Sendable (ManagerEvent) -> Void = { event in
            guard let value = select(event), last.withLock({ last in
                defer { last = value }
                return last != value
            }) else { return }
            channel.send(CollectionOfOne(value))
        }
        let id = manager.addObserver(startingWithStatus: startingWithStatus, sendIfChanged)
        // Nothing can end the channel before this returns it: its consumer does not have it yet, and stop() finds
        // it only below. Neither the manager nor this object is kept by the sequence: the manager keeps the
        // observer, which keeps the channel; the sequence keeps the channel alone, and its end removes the observer.
        channel.onTermination { [weak self, weak manager, pacing = channel.pacing] in
            pacing?.leave()
            manager?.removeObserver(id)
            self?.state.withLock { $0.removeObservation(id) }
        }
        // Its finisher is recorded under the lock stop() takes: a stop that began since the check above (after the
        // observer was added) refuses it, and it ends here; one that begins after finds it. Either way no stop
        // leaves it running.
        if !state.withLock({ $0.add(observation: { channel.finish() }, as: id) }) { channel.finish() }
        return UpdateSequence(channel)
    }
}

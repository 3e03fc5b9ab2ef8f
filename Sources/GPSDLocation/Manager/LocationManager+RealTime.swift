import GPSDCore

extension LocationManager {
    /// Calls `handler` with each fix synchronously on the thread that decided it, the manager's reader thread: no
    /// queue and no task between gpsd and the handler, the least latency there is.
    ///
    /// For real-time consumers: a control loop, a line written per fix. The handler runs on the thread that reads
    /// gpsd, so while it runs nothing is read, and the manager's other consumers wait for their fixes. **It must
    /// not block**: no sleeping, no waiting for a lock held long, no I/O that can wait; hand slow work on to a
    /// queue or a task of your own. A live gpsd cannot wait for it: gpsd drops a client that stops reading. Debug
    /// builds enforce the rule with a live gpsd: a call of `handler` or `onEnd` whose own time is longer than
    /// ``RealTimeSubscription/handlerTimeLimit`` (100 ms) stops the process with a message naming the rule. Its own
    /// time counts spinning and waiting (sleeping, a lock, a full pipe) but not a stop of the whole process (Ctrl-Z,
    /// a debugger), so that pausing a correct program never ends it. Release builds do not check. A replay waits
    /// for its consumers instead: there the handler may take its time, and the replay goes at its pace, at any
    /// ``ReplayPace``, losing no fix.
    ///
    /// The fixes are those ``AsyncLocationManager/updates(desiredAccuracy:distanceFilter:delivery:bufferingPolicy:)``
    /// gets with the same filters, in the order the manager decided them; calls never overlap. A connection that
    /// fails is retried under ``reconnectPolicy``, and the subscription goes on. It ends when it is cancelled
    /// (`RealTimeSubscription.cancel()`) or released, or when the manager ends it: a fatal failure
    /// (reconnection turned off or given up, gpsd refusing the device) with the error, the end of a recording with
    /// `nil`. Either way `onEnd` is called once, after the last fix; it may be called before this returns (a
    /// first connection refused with reconnection turned off). ``stopUpdatingLocation()`` and
    /// ``AsyncLocationManager/stop()`` do not end it.
    ///
    /// The handler is called on the session's thread (a replay's thread), with two exceptions: the epoch a
    /// ``EpochDelivery/oncePerEpoch`` subscription holds when it is cancelled may be passed on the thread that
    /// cancels; `onEnd` is called on the thread that decided the end, or on the one passing fixes on then.
    ///
    /// ```swift
    /// let subscription = manager.realTimeUpdates(desiredAccuracy: 5) { fix in
    ///     controller.steer(towards: fix.coordinate)   // quick: gpsd's reader thread runs it
    /// }
    /// // …
    /// subscription.cancel()
    /// ```
    /// - Parameters:
    ///   - desiredAccuracy: only fixes at least this accurate (metres); `nil` takes any.
    ///   - distanceFilter: only fixes at least this far (metres) from the last one passed.
    ///   - delivery: each epoch as its reports come (``EpochDelivery/asReported``, the default: the least
    ///     latency), or once, complete, when it is over (``EpochDelivery/oncePerEpoch``).
    ///   - onEnd: called once when the subscription ends: with the error of a fatal failure, or `nil`.
    ///   - handler: called with each fix. It must not block.
    /// - Returns: the subscription, which runs while it is held: cancel it, or release it, to end it.
    public func realTimeUpdates(
        desiredAccuracy: Double? = nil,
        distanceFilter: Double? = nil,
        delivery: EpochDelivery = .asReported,
        onEnd: (@Sendable (LocationError?) -> Void)? = nil,
        _ handler: @escaping @Sendable (Location) -> Void
    ) -> RealTimeSubscription {
        // A replay waits for its consumers, so there a slow handler only sets the pace: it is never timed. It does
        // not join the replay's backpressure either: its calls return before the replay reads on.
        realTimeUpdates(
            .continuous(desiredAccuracy: desiredAccuracy, distanceFilter: distanceFilter, delivery: delivery),
            timingCalls: _isDebugAssertConfiguration() && backpressure == nil, onEnd: onEnd, handler)
    }

    /// ``realTimeUpdates(desiredAccuracy:distanceFilter:delivery:onEnd:_:)`` of a continuous `request`, its calls
    /// timed against ``RealTimeSubscription/handlerTimeLimit`` or not: for tests whose handler waits for them.
    package func realTimeUpdates(
        _ request: SubscriptionRequest, timingCalls: Bool, onEnd: (@Sendable (LocationError?) -> Void)? = nil,
        _ handler: @escaping @Sendable (Location) -> Void
    ) -> RealTimeSubscription {
        let consumer = RealTimeConsumer(handler: handler, onEnd: onEnd, checksTime: timingCalls)
        let id = reserveSubscription()
        let subscription = RealTimeSubscription(manager: self, id: id, consumer: consumer)
        subscribe(id, request, consumer: consumer)
        return subscription
    }
}

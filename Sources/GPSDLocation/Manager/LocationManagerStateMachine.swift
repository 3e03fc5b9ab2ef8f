import Foundation

/// What a ``LocationManager`` observer (the async bridge) is told, synchronously, on the source's thread.
package enum ManagerEvent: Sendable {
    /// A fix passed the epoch filter. `age` is how old it was on arrival: zero for a fix from the stream,
    /// gpsd's own estimate for one from a POLL reply.
    case location(Location, age: Duration)
    /// Satellites seen and used.
    case satellites(SatelliteCount)
    /// Run `run` of the source failed; the manager has stopped it.
    case failed(LocationError, run: Int)
    /// Run `run` of the source ended (a recording reached its end).
    case finished(run: Int)
}

/// The logic of ``LocationManager``, apart from its locking and threads: every input is a method that
/// returns what to do, which the manager does after releasing its lock.
///
/// The source runs while anything wants fixes: continuous updates, a pending one-shot request, or a held
/// demand (the async bridge's callers, counted). Observers see every event but do not by themselves keep the
/// source running. Each start of the source is a new run number; events of older runs are ignored.
struct LocationManagerStateMachine {
    typealias Observer = @Sendable (ManagerEvent) -> Void

    enum Action {
        /// Bring the source in line with ``isSourceRunning`` and ``run``: start, restart or stop it.
        case reconcileSource
        case poll
        /// Call the delegate with these fixes, unless a stop came in between (`generation` changed).
        case deliver([Location], generation: Int)
        case fail(LocationError, generation: Int)
        case notify([Observer], ManagerEvent)
        case scheduleTimeout(request: Int, after: Duration)
    }

    // Configuration.
    var desiredAccuracy: Double?
    var distanceFilter: Double?
    var requestTimeout: Duration

    // What wants fixes.
    private(set) var isUpdating = false
    private(set) var pendingRequest: Int?
    private var observers: [Int: Observer] = [:]
    private(set) var demand = 0
    private var nextID = 1

    // The source.
    private(set) var run = 0
    private(set) var isSourceRunning = false

    // What arrived.
    private var coalescer = EpochCoalescer()
    /// The newest fix and the monotonic time it was current.
    private(set) var latest: (location: Location, at: Duration)?
    private(set) var satellites: SatelliteCount?
    private var lastDelivered: Location?
    private(set) var skippedLines = 0
    /// Bumped by every stop: deliveries queued before it are dropped.
    private(set) var generation = 0

    init(requestTimeout: Duration) { self.requestTimeout = requestTimeout }

    private var wantsFixes: Bool { isUpdating || pendingRequest != nil || demand > 0 }

    // MARK: Demand

    mutating func startUpdating() -> [Action] {
        if !isUpdating { lastDelivered = nil }  // the distance filter measures from this session's fixes
        isUpdating = true
        return startSourceIfNeeded()
    }

    mutating func stopUpdating() -> [Action] {
        isUpdating = false
        pendingRequest = nil
        generation += 1
        return stopSourceIfIdle()
    }

    mutating func requestLocation() -> [Action] {
        let id = nextID
        nextID += 1
        pendingRequest = id
        var actions = startSourceIfNeeded()
        actions.append(.scheduleTimeout(request: id, after: requestTimeout))
        return actions
    }

    mutating func requestTimedOut(_ id: Int) -> [Action] {
        guard pendingRequest == id else { return [] }
        pendingRequest = nil
        let error = LocationError(
            .locationUnknown,
            "no fix\(desiredAccuracy.map { " within \($0) m" } ?? "") in \(requestTimeout)",
            bestLocation: latest?.location)
        return [.fail(error, generation: generation)] + stopSourceIfIdle()
    }

    mutating func addObserver(_ observer: @escaping Observer) -> Int {
        let id = nextID
        nextID += 1
        observers[id] = observer
        return id
    }

    mutating func removeObserver(_ id: Int) {
        observers.removeValue(forKey: id)
    }

    /// One more holder wants fixes; returns the run it joins (to tell its end from an earlier run's).
    mutating func retainDemand() -> (run: Int, actions: [Action]) {
        demand += 1
        let actions = startSourceIfNeeded()
        return (run, actions)
    }

    mutating func releaseDemand() -> [Action] {
        demand -= 1
        return stopSourceIfIdle()
    }

    mutating func poll() -> [Action] { isSourceRunning ? [.poll] : [] }

    private mutating func startSourceIfNeeded() -> [Action] {
        guard wantsFixes, !isSourceRunning else { return [] }
        isSourceRunning = true
        run += 1
        coalescer.reset()
        return [.reconcileSource]
    }

    private mutating func stopSourceIfIdle() -> [Action] {
        guard !wantsFixes, isSourceRunning else { return [] }
        isSourceRunning = false
        return [.reconcileSource]
    }

    // MARK: Source events

    mutating func handle(_ event: SourceEvent, run eventRun: Int, now: Duration) -> [Action] {
        guard eventRun == run, isSourceRunning else { return [] }
        switch event {
        case .report(let report): return handle(report, now: now)
        case .skippedLine:
            skippedLines += 1
            return []
        case .failed(let error): return end(with: error)
        case .finished: return end(with: nil)
        }
    }

    private mutating func handle(_ report: GPSDReport, now: Duration) -> [Action] {
        switch report {
        case .fix(let location): return handle(location, age: .zero, now: now)
        case .poll(let time, let reports):
            return reports.flatMap { report -> [Action] in
                guard case .fix(let location) = report else { return [] }
                return handle(location, age: Self.age(of: location, polledAt: time), now: now)
            }
        case .sky(let count):
            satellites = count
            return observers.isEmpty ? [] : [.notify(Array(observers.values), .satellites(count))]
        case .error(let message):
            // gpsd answers a command it cannot carry out (a WATCH of a device it does not have) with ERROR.
            return end(with: LocationError(.protocolError, "gpsd: \(message)"))
        case .noFix, .version, .devices, .other:
            return []
        }
    }

    /// How old a fix from a POLL reply was, by gpsd's clock: the poll's time minus the fix's. Only when the
    /// two are plausibly on the same clock (0 to 1 day apart); a replayed log's fix times can be years off,
    /// and then gpsd holding the fix is the best freshness we know.
    static func age(of location: Location, polledAt time: Date?) -> Duration {
        guard let time, let fixTime = location.timestamp else { return .zero }
        let seconds = time.timeIntervalSince(fixTime)
        return (0...86_400).contains(seconds) ? .seconds(seconds) : .zero
    }

    private mutating func handle(_ location: Location, age: Duration, now: Duration) -> [Action] {
        let time = now - age
        if let latest, latest.at > time { return [] }  // an older POLL fix than one we hold
        guard coalescer.accept(location) else { return [] }
        latest = (location, time)
        var actions: [Action] = []
        if !observers.isEmpty { actions.append(.notify(Array(observers.values), .location(location, age: age))) }

        guard location.meets(desiredAccuracy: desiredAccuracy) else { return actions }
        if pendingRequest != nil {
            pendingRequest = nil
            if isUpdating { lastDelivered = location }
            actions.append(.deliver([location], generation: generation))
            actions += stopSourceIfIdle()
        } else if isUpdating {
            guard location.passes(distanceFilter: distanceFilter, since: lastDelivered) else { return actions }
            lastDelivered = location
            actions.append(.deliver([location], generation: generation))
        }
        return actions
    }

    /// The source ended, with an error or at the end of a recording.
    private mutating func end(with error: LocationError?) -> [Action] {
        isSourceRunning = false
        let hadRequest = pendingRequest != nil
        let wasUpdating = isUpdating
        pendingRequest = nil
        isUpdating = false
        var actions: [Action] = [.reconcileSource]
        if let error, hadRequest || wasUpdating {
            actions.append(.fail(error, generation: generation))
        } else if hadRequest {
            actions.append(.fail(LocationError(
                .locationUnknown, "the recording ended before a fix", bestLocation: latest?.location),
                generation: generation))
        }
        if !observers.isEmpty {
            let event: ManagerEvent = error.map { .failed($0, run: run) } ?? .finished(run: run)
            actions.append(.notify(Array(observers.values), event))
        }
        return actions
    }
}

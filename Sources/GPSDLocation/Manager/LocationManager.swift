public import Dispatch
public import Foundation

/// Delivers fixes from gpsd, or from a recording, to a delegate: the CoreLocation model on Linux.
///
/// ```swift
/// let manager = LocationManager()                      // gpsd on localhost:2947
/// manager.delegate = printer                           // a LocationManagerDelegate
/// manager.desiredAccuracy = 10                         // metres
/// manager.startUpdatingLocation()
/// ```
///
/// The manager talks to gpsd through libgps on a thread of its own and calls the delegate on
/// ``delegateQueue``: by default one serial queue per manager, so callbacks never overlap and arrive in order.
/// It connects when something wants fixes (``startUpdatingLocation()``, ``requestLocation()``, or an
/// ``AsyncLocationManager`` caller) and disconnects when nothing does.
///
/// gpsd sends several reports per receiver cycle; the manager passes on each cycle's fix once, and again only
/// when a later report of the same cycle adds a value (the altitude, say), so two equal locations never
/// follow each other.
///
/// The manager ignores SIGPIPE process-wide when it first connects: libgps writes to gpsd with plain
/// `write(2)`, and a write to a gpsd that has gone would otherwise kill the process.
public final class LocationManager: Sendable {
    /// How long ``requestLocation()`` waits for a fix unless told otherwise: 30 seconds, enough for a warm
    /// receiver to get its first fix.
    public static let defaultRequestTimeout: Duration = .seconds(30)

    /// The queue the delegate is called on.
    public let delegateQueue: DispatchQueue
    /// Where fixes come from: the gpsd server, or `nil` for a recording.
    public let server: GPSDServer?

    private let source: any LocationSource
    private let clock: any ManagerClock
    private let state: Locked<State>
    private let sourceControl = Locked(SourceControl())
    private let queueKey = DispatchSpecificKey<UInt8>()

    private struct State {
        var machine: LocationManagerStateMachine
        weak var delegate: (any LocationManagerDelegate)?
    }

    /// Which run the source was last told to be in. Starting and stopping happen outside the state lock, so
    /// two threads' decisions could reach the source in the wrong order; one thread at a time reconciles
    /// the source with the newest decision instead, and a thread that finds another at it leaves it a note.
    private struct SourceControl {
        var actualRun: Int?
        var busy = false
        var dirty = false
    }

    /// A manager for a live gpsd.
    ///
    /// Nothing connects until fixes are wanted.
    /// - Parameters:
    ///   - server: where gpsd listens, and optionally which receiver to watch.
    ///   - delegateQueue: where to call the delegate; `nil` makes a serial queue for this manager.
    public convenience init(server: GPSDServer = .default, delegateQueue: DispatchQueue? = nil) {
        self.init(source: GPSDSessionSource(server: server), server: server, delegateQueue: delegateQueue)
    }

    /// A manager that replays a recording: gpsd JSON reports, one per line, as `gpspipe -w` writes them.
    ///
    /// Lines that are not gpsd reports are skipped and counted in ``skippedLineCount``. A file that cannot be
    /// read, or holds no reports, fails with ``LocationError/Code/invalidRecording``.
    ///
    /// ```swift
    /// let manager = LocationManager(recording: URL(filePath: "drive.gpsd.json"), pace: .accelerated(by: 10))
    /// ```
    /// - Parameters:
    ///   - recording: the file.
    ///   - pace: how fast to replay: as recorded (the default), faster, or as fast as possible.
    ///   - delegateQueue: where to call the delegate; `nil` makes a serial queue for this manager.
    public convenience init(recording: URL, pace: ReplayPace = .realTime, delegateQueue: DispatchQueue? = nil) {
        self.init(source: RecordingSource(url: recording, pace: pace), server: nil, delegateQueue: delegateQueue)
    }

    /// A manager on any source, with an injectable clock: for tests and for the async bridge's tests.
    package init(
        source: any LocationSource,
        server: GPSDServer? = nil,
        clock: any ManagerClock = SystemManagerClock(),
        delegateQueue: DispatchQueue? = nil
    ) {
        self.source = source
        self.server = server
        self.clock = clock
        self.delegateQueue = delegateQueue ?? DispatchQueue(label: "GPSDLocation.LocationManager.delegate")
        self.state = Locked(State(machine: LocationManagerStateMachine(requestTimeout: Self.defaultRequestTimeout)))
        self.delegateQueue.setSpecific(key: queueKey, value: 1)
    }

    deinit {
        source.stop()
    }

    // MARK: Configuration

    /// Receives fixes and errors. Held weakly.
    public var delegate: (any LocationManagerDelegate)? {
        get { state.withLock { $0.delegate } }
        set { state.withLock { $0.delegate = newValue } }
    }

    /// The horizontal accuracy, in metres, a fix must have to be delivered; `nil` (the default) takes any.
    ///
    /// A fix whose accuracy gpsd does not know does not meet a desired accuracy.
    public var desiredAccuracy: Double? {
        get { state.withLock { $0.machine.desiredAccuracy } }
        set { state.withLock { $0.machine.desiredAccuracy = newValue } }
    }

    /// How far, in metres, the receiver must move from the last delivered fix before continuous updates
    /// deliver another; `nil` (the default) delivers every cycle.
    public var distanceFilter: Double? {
        get { state.withLock { $0.machine.distanceFilter } }
        set { state.withLock { $0.machine.distanceFilter = newValue } }
    }

    /// How long ``requestLocation()`` waits before failing with ``LocationError/Code/locationUnknown``.
    /// Defaults to ``defaultRequestTimeout``.
    public var requestTimeout: Duration {
        get { state.withLock { $0.machine.requestTimeout } }
        set { state.withLock { $0.machine.requestTimeout = newValue } }
    }

    /// The newest fix the manager has received, whatever the filters; `nil` before the first.
    public var location: Location? { state.withLock { $0.machine.latest?.location } }

    /// The satellites the receiver last reported seeing and using.
    public var satellites: SatelliteCount? { state.withLock { $0.machine.satellites } }

    /// How many lines were not gpsd reports (garbage, truncated or over-long lines) and were skipped.
    public var skippedLineCount: Int { state.withLock { $0.machine.skippedLines } }

    // MARK: Requests

    /// Delivers one fix: the first that meets ``desiredAccuracy``, in one
    /// ``LocationManagerDelegate/locationManager(_:didUpdateLocations:)`` call; or one
    /// ``LocationManagerDelegate/locationManager(_:didFailWithError:)`` with
    /// ``LocationError/Code/locationUnknown`` after ``requestTimeout``. Then stops, unless continuous updates
    /// are on. A second call while one is pending replaces it.
    public func requestLocation() {
        perform(state.withLock { $0.machine.requestLocation() })
    }

    /// Delivers every receiver cycle's fix that passes ``desiredAccuracy`` and ``distanceFilter``, until
    /// ``stopUpdatingLocation()``. A failure of the connection is reported to the delegate and ends updates.
    public func startUpdatingLocation() {
        perform(state.withLock { $0.machine.startUpdating() })
    }

    /// Stops continuous updates and any pending ``requestLocation()``.
    ///
    /// When it returns, the delegate receives no further callbacks: a callback already running on
    /// ``delegateQueue`` (when called from another thread) is waited for.
    public func stopUpdatingLocation() {
        perform(state.withLock { $0.machine.stopUpdating() })
        if DispatchQueue.getSpecific(key: queueKey) == nil {
            delegateQueue.sync(flags: .barrier) {}  // a barrier also waits on a concurrent queue
        }
    }

    // MARK: Observers (the async bridge)

    /// Registers an observer told of every fix (after epoch filtering, before the delegate's filters),
    /// satellite counts, failures and the end of a recording, synchronously on the source's thread, never
    /// under the manager's lock. Observing does not start the source: ``retainUpdates()`` does.
    package func addObserver(_ observer: @escaping @Sendable (ManagerEvent) -> Void) -> Int {
        state.withLock { $0.machine.addObserver(observer) }
    }

    package func removeObserver(_ id: Int) {
        state.withLock { $0.machine.removeObserver(id) }
    }

    /// Keeps the source running until a matching ``releaseUpdates()``. Returns the run of the source the
    /// holder joined: a `.failed`/`.finished` event of an earlier run is not its concern.
    @discardableResult
    package func retainUpdates() -> Int {
        let (run, actions) = state.withLock { $0.machine.retainDemand() }
        perform(actions)
        return run
    }

    package func releaseUpdates() {
        perform(state.withLock { $0.machine.releaseDemand() })
    }

    /// Asks gpsd for its current fix (`?POLL;`) if the source is running.
    package func poll() {
        perform(state.withLock { $0.machine.poll() })
    }

    /// The newest fix and how long ago it was current.
    package var latestFix: (location: Location, age: Duration)? {
        let now = clock.now
        return state.withLock { state in state.machine.latest.map { ($0.location, now - $0.at) } }
    }

    // MARK: Acting

    private func perform(_ actions: [LocationManagerStateMachine.Action]) {
        for action in actions {
            switch action {
            case .reconcileSource:
                reconcileSource()
            case .poll:
                source.poll()
            case .deliver(let locations, let generation):
                delegateQueue.async { [weak self] in
                    guard let self, let delegate = self.delegate(ifCurrent: generation) else { return }
                    delegate.locationManager(self, didUpdateLocations: locations)
                }
            case .fail(let error, let generation):
                delegateQueue.async { [weak self] in
                    guard let self, let delegate = self.delegate(ifCurrent: generation) else { return }
                    delegate.locationManager(self, didFailWithError: error)
                }
            case .notify(let observers, let event):
                for observer in observers { observer(event) }
            case .scheduleTimeout(let request, let delay):
                clock.schedule(after: delay) { [weak self] in
                    guard let self else { return }
                    self.perform(self.state.withLock { $0.machine.requestTimedOut(request) })
                }
            }
        }
    }

    /// Starts, restarts or stops the source to match the state machine's latest decision. Whoever finds the
    /// source being reconciled marks it dirty and leaves; the reconciler loops until nothing changed.
    private func reconcileSource() {
        let mine = sourceControl.withLock { control -> Bool in
            if control.busy {
                control.dirty = true
                return false
            }
            control.busy = true
            return true
        }
        guard mine else { return }
        while true {
            let desired = state.withLock { $0.machine.isSourceRunning ? $0.machine.run : nil }
            let actual = sourceControl.withLock { $0.actualRun }
            if desired != actual {
                if let run = desired {
                    source.start { [weak self] event in self?.receive(event, run: run) }
                } else {
                    source.stop()
                }
                sourceControl.withLock { $0.actualRun = desired }
            }
            let done = sourceControl.withLock { control -> Bool in
                if control.dirty {
                    control.dirty = false
                    return false
                }
                control.busy = false
                return true
            }
            if done { return }
        }
    }

    private func receive(_ event: SourceEvent, run: Int) {
        let now = clock.now
        perform(state.withLock { $0.machine.handle(event, run: run, now: now) })
    }

    private func delegate(ifCurrent generation: Int) -> (any LocationManagerDelegate)? {
        state.withLock { $0.machine.generation == generation ? $0.delegate : nil }
    }
}

public import Dispatch
public import FoundationEssentials
import GPSDCore
import GPSDSystem
public import Logging

/// Delivers fixes from gpsd, or from a recording, to a delegate: the CoreLocation model on Linux.
///
/// ```swift
/// let manager = LocationManager()                      // gpsd on localhost:2947
/// manager.delegate = printer                           // a LocationManagerDelegate
/// manager.desiredAccuracy = 10                         // metres
/// manager.startUpdatingLocation()
/// ```
///
/// The manager reads gpsd on a thread of its own and calls the delegate on ``delegateQueue``: by default one
/// serial queue per manager, so callbacks never overlap and arrive in order. A delegate slower than gpsd gets the
/// fixes that came meanwhile in one call, the newest last, not a queue of calls that grows
/// (``LocationManagerDelegate/locationManager(_:didUpdateLocations:)`` says what is kept). It connects when something wants
/// fixes (``startUpdatingLocation()``, ``requestLocation()``, or an ``AsyncLocationManager`` caller) and
/// disconnects when nothing does; after ``stopUpdatingLocation()`` its thread has ended, and when it is
/// released its thread ends.
///
/// When the connection to gpsd fails or cannot be made while fixes are wanted, it reconnects by
/// ``reconnectPolicy`` and goes on with the same callbacks; ``status`` (and the delegate's
/// ``LocationManagerDelegate/locationManager(_:didChangeStatus:)``) says what is happening meanwhile.
///
/// gpsd sends several reports per receiver cycle; the manager passes on each cycle's fix once, and again only
/// when a later report of the same cycle adds a value (the altitude, say), so two equal locations never
/// follow each other. Values that cannot be true are left out or the fix dropped (``statistics``).
public final class LocationManager: Sendable {
    /// How long ``requestLocation()`` waits for a fix unless told otherwise: 30 seconds, enough for a warm
    /// receiver to get its first fix.
    public static let defaultRequestTimeout: Duration = .seconds(30)
    /// How long a connection to gpsd may take before the attempt counts as failed: 5 seconds. gpsd's greeting
    /// (its VERSION, which it sends at once) may take as long again: a server that accepts and says nothing has
    /// not connected.
    public static let defaultConnectTimeout: Duration = GPSDServer.defaultConnectTimeout
    /// How long without any report before ``status`` is ``LocationStatus/stale(silentFor:)``: 5 seconds.
    public static let defaultStaleTimeout: Duration = .seconds(5)
    /// How long the session stays open after the last one-shot request: 3 seconds, three epochs of a 1 Hz
    /// receiver.
    public static let defaultSessionLinger: Duration = .seconds(3)

    /// The queue the delegate is called on.
    public let delegateQueue: DispatchQueue
    /// Where fixes come from: the gpsd server, or `nil` for a recording.
    public let server: GPSDServer?

    let source: any LocationSource
    let clock: any ManagerClock
    let storage: ManagerStorage

    /// A manager for a live gpsd.
    ///
    /// Nothing connects until fixes are wanted.
    /// - Parameters:
    ///   - server: where gpsd listens, and optionally which receiver to watch.
    ///   - connectTimeout: how long an attempt to connect may take (a host that never answers), and then gpsd's
    ///     greeting (a server that accepts and says nothing). A server whose first line is not gpsd's is not
    ///     gpsd: the watch ends with ``LocationError/Code/notGPSD``.
    ///   - delegateQueue: where to call the delegate; `nil` makes a serial queue for this manager.
    ///   - metrics: where its ``health`` is reported (``MetricsOptions``): by default to the factory the program
    ///     bootstrapped, with the dimension `server`.
    public convenience init(
        server: GPSDServer = .default, connectTimeout: Duration = LocationManager.defaultConnectTimeout,
        delegateQueue: DispatchQueue? = nil, metrics: MetricsOptions = .default
    ) {
        self.init(source: GPSDSessionSource(server: server, connectTimeout: connectTimeout), server: server,
                  delegateQueue: delegateQueue, metrics: metrics)
    }

    /// A manager that replays a recording: gpsd JSON reports, one per line, as `gpspipe -w` writes them.
    ///
    /// Lines that are not gpsd reports are skipped and counted in ``statistics``. A file that cannot be read, or
    /// holds no reports, fails with ``LocationError/Code/invalidRecording``. At any pace, the replay goes no
    /// faster than its slowest consumer: it waits while the delegate has 16 calls queued and not yet made, or
    /// an ``AsyncLocationManager`` sequence 16 fixes not yet taken, so none is ever dropped.
    ///
    /// ```swift
    /// let manager = LocationManager(recording: URL(filePath: "drive.gpsd.json"), pace: .accelerated(by: 10))
    /// ```
    /// - Parameters:
    ///   - recording: the file.
    ///   - pace: how fast to replay: as recorded (the default), faster, or as fast as possible.
    ///   - delegateQueue: where to call the delegate; `nil` makes a serial queue for this manager.
    ///   - metrics: where its ``health`` is reported: by default to the factory the program bootstrapped, with the
    ///     dimension `recording`, the file's name.
    public convenience init(
        recording: URL, pace: ReplayPace = .realTime, delegateQueue: DispatchQueue? = nil,
        metrics: MetricsOptions = .default
    ) {
        self.init(source: RecordingSource(url: recording, pace: pace), server: nil, delegateQueue: delegateQueue,
                  metrics: metrics, recordingName: recording.lastPathComponent)
    }

    /// A manager that replays a recording held in memory (one built into a program, say): the contents of a
    /// file ``init(recording:pace:delegateQueue:metrics:)`` would replay.
    ///
    /// ```swift
    /// let manager = LocationManager(recording: Array(data), named: "drive.gpsd.json", pace: .asFastAsPossible)
    /// ```
    /// - Parameters:
    ///   - contents: gpsd JSON reports, one per line.
    ///   - name: what messages call the recording.
    ///   - pace: how fast to replay: as recorded (the default), faster, or as fast as possible.
    ///   - delegateQueue: where to call the delegate; `nil` makes a serial queue for this manager.
    ///   - metrics: where its ``health`` is reported: by default to the factory the program bootstrapped, with the
    ///     dimension `recording`, `name`.
    public convenience init(
        recording contents: [UInt8], named name: String, pace: ReplayPace = .realTime,
        delegateQueue: DispatchQueue? = nil, metrics: MetricsOptions = .default
    ) {
        self.init(source: RecordingSource(.contents(contents, name: name), pace: pace), server: nil,
                  delegateQueue: delegateQueue, metrics: metrics, recordingName: name)
    }

    /// A manager on any source, with an injectable clock and reconnection jitter: for tests. Its metrics carry
    /// `server`, or `recording` (`recordingName`), unless `metrics` names dimensions.
    package init(
        source: any LocationSource,
        server: GPSDServer? = nil,
        clock: any ManagerClock = SystemManagerClock(),
        jitterSeed: UInt64 = .random(in: .min ... .max),
        delegateQueue: DispatchQueue? = nil,
        metrics: MetricsOptions = .default,
        recordingName: String = "recording"
    ) {
        self.source = source
        self.server = server
        self.clock = clock
        self.delegateQueue = delegateQueue ?? DispatchQueue(label: "GPSDLocation.LocationManager.delegate")
        let dimensions = server.map { [("server", $0.description)] } ?? [("recording", recordingName)]
        self.storage = ManagerStorage(
            requestTimeout: Self.defaultRequestTimeout, jitterSeed: jitterSeed, backpressure: source.backpressure,
            clock: clock, metrics: metrics.isEnabled ? HealthMetrics(metrics, source: dimensions) : nil)
        // A replay plays only while something wants it: lingering, it would play on with no one listening.
        if source.backpressure != nil { storage.configure { $0.sessionLinger = .zero } }
    }

    deinit {
        // Nothing else can act now: a session being opened or closed would hold a reference to the manager.
        for session in storage.sessionsLeft() { session.close() }
    }

    // MARK: Configuration

    /// Receives fixes, errors and status changes. Held weakly.
    public var delegate: (any LocationManagerDelegate)? {
        get { storage.delegate }
        set { storage.delegate = newValue }
    }

    /// The horizontal accuracy, in metres, a fix must have to be delivered; `nil` (the default) takes any.
    ///
    /// A fix whose accuracy gpsd does not know does not meet a desired accuracy.
    public var desiredAccuracy: Double? {
        get { storage.configuration.desiredAccuracy }
        set { storage.configure { $0.desiredAccuracy = newValue } }
    }

    /// How far, in metres, the receiver must move from the last delivered fix before continuous updates
    /// deliver another; `nil` (the default) delivers every cycle.
    public var distanceFilter: Double? {
        get { storage.configuration.distanceFilter }
        set { storage.configure { $0.distanceFilter = newValue } }
    }

    /// How long ``requestLocation()`` waits before failing with ``LocationError/Code/locationUnknown``.
    /// Defaults to ``defaultRequestTimeout``. A negative duration is taken as zero, a century or more as never.
    public var requestTimeout: Duration {
        get { storage.configuration.requestTimeout }
        set { storage.configure { $0.requestTimeout = newValue } }
    }

    /// How to reconnect when the connection to gpsd fails while fixes are wanted; ``ReconnectPolicy/never``
    /// turns it off. Defaults to ``ReconnectPolicy/default`` (0.25 s doubling to 8 s, without end).
    public var reconnectPolicy: ReconnectPolicy {
        get { storage.configuration.reconnectPolicy }
        set { storage.configure { $0.reconnectPolicy = newValue } }
    }

    /// How many receivers the manager keeps apart now, for their epochs (at most
    /// ``EpochAssembly/maximumReceivers``).
    package var receiversKept: Int { storage.receiversKept }

    /// How long without any report from gpsd before ``status`` says ``LocationStatus/stale(silentFor:)``.
    /// Defaults to ``defaultStaleTimeout``. A negative duration is taken as zero, a century or more as never.
    public var staleTimeout: Duration {
        get { storage.configuration.staleTimeout }
        set { storage.configure { $0.staleTimeout = newValue } }
    }

    /// How long the gpsd session stays open after the last one-shot request leaves it (with its fix, its timeout or
    /// its cancellation) while nothing else wants fixes. Defaults to ``defaultSessionLinger`` for a live gpsd, and to
    /// zero for a recording (a replay plays only while something wants it); zero closes it at once, a century or more
    /// keeps it open. A negative duration is taken as zero.
    ///
    /// A loop of ``AsyncLocationManager/requestLocation(timeout:maximumAge:desiredAccuracy:)`` calls (or of
    /// ``requestLocation()``) then holds one session: each request waits only for the receiver's next fix, not for
    /// a connection and gpsd's first report; ``status`` stays as it is, ``LocationSnapshot/connections`` counts one,
    /// and gpsd sees one client. Anything else that stops wanting fixes (``stopUpdatingLocation()``,
    /// ``AsyncLocationManager/stop()``, the end of a stream) closes a lingering session at once, and their promises
    /// hold as before: when they return, the session's thread has ended if nothing else wants fixes.
    ///
    /// ```swift
    /// gps.manager.sessionLinger = .seconds(10)   // a request every 5 s keeps one session
    /// ```
    public var sessionLinger: Duration {
        get { storage.configuration.sessionLinger }
        set { storage.configure { $0.sessionLinger = newValue } }
    }

    /// How a live timeline judges the receiver at rest (``LocationUpdate/isStationary``): the thresholds and dwells
    /// of ``StationaryDetector``, whose documentation states the rule and the defaults. A timeline takes the
    /// configuration when it is made
    /// (``AsyncLocationManager/liveUpdates(desiredAccuracy:distanceFilter:bufferingPolicy:)``); set it before.
    ///
    /// ```swift
    /// gps.manager.stationaryDetection.positionOnlyDwell = 4   // rest within 4 s, without a certain speed too
    /// for try await update in gps.liveUpdates() { … }
    /// ```
    public var stationaryDetection: StationaryDetector.Configuration {
        get { storage.configuration.stationaryDetection }
        set { storage.configure { $0.stationaryDetection = newValue } }
    }

    /// Where the manager logs what gpsd sent that cannot be true (once per kind). `Logger(label: "GPSDLocation")`
    /// unless set.
    public var logger: Logger {
        get { storage.logger }
        set { storage.logger = newValue }
    }

    // MARK: What the manager knows

    /// The newest fix the manager has received, whatever the filters; `nil` before the first. Its
    /// ``Location/age`` says how long ago it arrived.
    public var location: Location? { storage.latest?.location }

    /// How many satellites the receiver sees and uses, as its newest whole epoch counted them: the counts of ``sky``.
    public var satellites: SatelliteCount? { storage.sky?.count }

    /// The satellites of the newest whole receiver epoch, each with its place in the sky, signal and use, the
    /// counts (in all and per system) and the DOPs, as ``AsyncLocationManager/satelliteUpdates()`` gives them;
    /// `nil` before the first epoch's view, and once the receiver has gone, lost its fix or the session has ended.
    ///
    /// ```swift
    /// if let sky = manager.sky { print(sky.count(for: .gps).used, "GPS satellites used") }
    /// ```
    public var sky: SkyView? { storage.sky }

    /// Whether fixes are available, and if not why.
    public var status: LocationStatus { storage.status }

    /// What was not passed on, and why: skipped lines, values that cannot be true, fixes without a time, SKYs
    /// listing more satellites than libgps holds.
    public var statistics: ReportStatistics { storage.statistics }

    /// Everything a control loop acts on, read in one step at this instant: the newest fix and heading with their
    /// ages now, the status, whether each is current, whether the receiver is at rest, the satellites' counts, and
    /// from them the position predicted for a tick between fixes (``LocationSnapshot``). It takes the manager's
    /// lock once, allocates nothing and needs no task: a loop of 100 Hz polls it.
    ///
    /// ```swift
    /// let state = manager.snapshot
    /// if !state.isStale, let age = state.locationAge, age < .milliseconds(1500),
    ///    let pose = try? state.predictedLocation(at: state.instant) {
    ///     robot.track(pose.coordinate)
    /// } else {
    ///     robot.hold()
    /// }
    /// ```
    public var snapshot: LocationSnapshot { storage.snapshot }

    /// How the manager has fared since it was made: reconnections, fixes and fixes a second, the time in each kind
    /// of status, what was dropped, the newest fix's age. Read at once, under the manager's lock for a moment, on any
    /// thread; the same counts go to swift-metrics (``MetricsOptions``).
    ///
    /// ```swift
    /// let health = manager.health
    /// if health.reconnects > 10 || (health.fixesPerSecond ?? 1) < 0.5 { alert("gpsd is unwell: \(health)") }
    /// ```
    public var health: LocationHealth { storage.health }

    /// How many lines were not gpsd reports (garbage, truncated or over-long lines) and were skipped.
    public var skippedLineCount: Int { statistics.skippedLines }

    // MARK: Requests

    /// Delivers one fix: the first that meets ``desiredAccuracy``, in one
    /// ``LocationManagerDelegate/locationManager(_:didUpdateLocations:)`` call; or one
    /// ``LocationManagerDelegate/locationManager(_:didFailWithError:)``: with ``LocationError/Code/locationUnknown``
    /// after ``requestTimeout``, or with an attempt's error while the watch has not reached gpsd since it began (at
    /// once if an attempt has failed already). Then stops, unless continuous updates are on. A second call while
    /// one is pending replaces it.
    ///
    /// What stands in the way is said the same way whatever it is. A request made once the watch has reached gpsd
    /// (updates or a stream running) waits out everything that may pass until its timeout: reconnection, gpsd
    /// unreachable during a backoff, no receiver, a receiver gone, waiting for a fix. The timeout's error names
    /// it: ``LocationError/status`` is the status then, and the message ends with it
    /// (`no fix in 2.0 seconds: receiver gone (/dev/ttyUSB0)`, `no fix in 2.0 seconds: gpsd unreachable: cannot
    /// connect to gpsd at localhost:2947: connection refused; reconnecting (attempt 3)`). Only a failure that
    /// ends the watch (see ``reconnectPolicy``) fails it sooner.
    ///
    /// ```swift
    /// func locationManager(_ manager: LocationManager, didFailWithError error: LocationError) {
    ///     if case .deviceGone? = error.status { alarm("receiver unplugged") }
    /// }
    /// ```
    public func requestLocation() {
        perform(storage.requestLocation())
    }

    /// Delivers every receiver cycle's fix that passes ``desiredAccuracy`` and ``distanceFilter``, until
    /// ``stopUpdatingLocation()``. A connection that fails is reconnected by ``reconnectPolicy``; only a
    /// failure that cannot pass (or every retry failing) is reported to the delegate, and ends updates.
    public func startUpdatingLocation() {
        perform(storage.startUpdating())
    }

    /// Stops continuous updates and any pending ``requestLocation()``.
    ///
    /// When it returns, no callback decided before it begins any more, one that was running on another thread
    /// has returned, and if nothing else wants fixes, the session's thread has ended. (Updates started again, by another thread or a callback, call the delegate again.)
    /// Called from inside a callback, it waits for no callback: the others may be waiting for this one. Safe
    /// from any queue, the ``delegateQueue``'s target included; do not call it while holding a lock that a
    /// callback running on another thread waits for.
    public func stopUpdatingLocation() {
        stopDelegateCalls(headings: false)
    }

    /// A stop of the delegate's fixes or its headings: decides it, lets the sessions settle, then (unless called
    /// from inside a callback) waits until no callback of that kind decided before it is still running.
    func stopDelegateCalls(headings: Bool) {
        let (stop, decision) = storage.stopDelegateCalls(headings: headings)
        perform(decision)
        settleSessions(upTo: stop.sessionNumber)
        guard !stop.insideCallback else { return }
        storage.waitForCallbacks(headings: headings, before: stop)
    }
}

import GPSDSystem

/// An error from a ``LocationManager`` or ``AsyncLocationManager``.
///
/// Switch over ``code``; new codes may be added, so include a `default` case. Where a system call failed
/// (a refused connection, a pipe the system would not give), ``errorNumber`` holds its `errno` and ``message``
/// its text.
///
/// ```swift
/// do {
///     let fix = try await manager.requestLocation(timeout: .seconds(10))
/// } catch let error as LocationError where error.code == .timedOut {
///     print("no fix yet; best so far:", error.bestLocation as Any)
/// }
/// ```
public struct LocationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure this is. A struct of static members, so codes can be added without breaking a
    /// `switch` that has a `default`.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Value: String, Sendable, Hashable {
            case gpsdUnavailable = "gpsd unavailable"
            case connectionLost = "connection lost"
            case locationUnknown = "location unknown"
            case timedOut = "timed out"
            case invalidRecording = "invalid recording"
            case protocolError = "protocol error"
            case resourceUnavailable = "resource unavailable"
            case notGPSD = "not gpsd"
        }

        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// gpsd could not be reached: nothing listens at the address, or the name does not resolve.
        public static let gpsdUnavailable = Code(.gpsdUnavailable)
        /// The connection to gpsd ended while in use.
        public static let connectionLost = Code(.connectionLost)
        /// No fix arrived in the time allowed, or the source ended before one did.
        public static let locationUnknown = Code(.locationUnknown)
        /// An async request reached its timeout; ``LocationError/bestLocation`` holds the best fix seen.
        public static let timedOut = Code(.timedOut)
        /// A recording could not be read, or held no gpsd reports.
        public static let invalidRecording = Code(.invalidRecording)
        /// gpsd said something we cannot use (an ERROR report, a refused command).
        public static let protocolError = Code(.protocolError)
        /// The system refused something the manager needs: a thread, a pipe, memory. ``LocationError/errorNumber``
        /// says why (`EMFILE`: too many open files, `EAGAIN`: too many threads, …).
        public static let resourceUnavailable = Code(.resourceUnavailable)
        /// The server at gpsd's address is not gpsd: what it sent first is not gpsd's JSON (a web server's
        /// `HTTP/1.0 400 Bad request`, a receiver's NMEA), where gpsd greets every client with its VERSION. The
        /// address is wrong, and stays so: not transient, the watch ends. (A server that says nothing within
        /// the connect timeout, or hangs up before greeting, may be a gpsd stopped or full: that is
        /// ``gpsdUnavailable``, and retried.)
        public static let notGPSD = Code(.notGPSD)

        /// Whether the failure may pass: gpsd could not be reached or the connection broke. A manager reconnects
        /// after these (see ``ReconnectPolicy``); the others end the watch.
        public var isTransient: Bool { value == .gpsdUnavailable || value == .connectionLost }

        /// The code in words: `gpsd unavailable`, `timed out`, …
        public var description: String { value.rawValue }
    }

    /// What kind of failure.
    public var code: Code
    /// A sentence for people: what failed and why.
    public var message: String
    /// The system's error number (`errno`), where a system call failed: `ECONNREFUSED` when nothing listens
    /// at gpsd's address, `EMFILE` when the process has too many files open, ….
    public var errorNumber: Int32?
    /// For ``Code/timedOut`` and ``Code/locationUnknown``: the best fix seen before giving up, if any.
    public var bestLocation: Location?
    /// For a request that reached its timeout: the manager's status then, what stood in the way of a fix
    /// (``LocationStatus/reconnecting(attempt:after:because:)`` with gpsd unreachable,
    /// ``LocationStatus/deviceGone(device:)``, ``LocationStatus/noDevice``, ``LocationStatus/waitingForFix(satellites:)``,
    /// …; ``LocationStatus/fix(_:_:)`` when fixes came but none met the request's accuracy). ``message`` names it too.
    ///
    /// ```swift
    /// } catch let error as LocationError where error.code == .timedOut {
    ///     if case .deviceGone = error.status { alarm("the receiver is unplugged") }
    /// }
    /// ```
    public var status: LocationStatus?

    /// Makes an error; mostly for tests and for sources of your own.
    ///
    /// ```swift
    /// let error = LocationError(.locationUnknown, "no fix in 30 s")
    /// ```
    public init(
        _ code: Code, _ message: String, errorNumber: Int32? = nil, bestLocation: Location? = nil,
        status: LocationStatus? = nil
    ) {
        self.code = code
        self.message = message
        self.errorNumber = errorNumber
        self.bestLocation = bestLocation
        self.status = status
    }

    /// `code: message`, e.g. `gpsd unavailable: cannot connect to gpsd at localhost:2947: …`.
    public var description: String { "\(code): \(message)" }
}

extension SystemError {
    /// This failure as the public error, with `code` and a sentence that says what was being done:
    /// ``LocationError/Code/resourceUnavailable`` for a resource the system refused,
    /// ``LocationError/Code/gpsdUnavailable`` for a connection that could not be made,
    /// ``LocationError/Code/connectionLost`` for one that broke. It carries the number in
    /// ``LocationError/errorNumber``.
    func locationError(_ code: LocationError.Code, _ doing: String) -> LocationError {
        LocationError(code, "\(doing): \(description)", errorNumber: number)
    }
}

extension LocationStatus {
    /// What this status says stands in the way of a fix, for a request's timeout, with the failure the attempts to
    /// connect are retrying after (`lastFailure`), if any: `gpsd unreachable: cannot connect to gpsd at
    /// localhost:2947: connection refused; reconnecting (attempt 3)`, `receiver gone (/dev/ttyUSB0)`, `gpsd has no
    /// receiver`, …; `nil` when fixes are coming.
    package func obstacle(lastFailure: LocationError?) -> String? {
        func retrying(_ error: LocationError) -> String {
            error.code == .gpsdUnavailable ? "gpsd unreachable: \(error.message)" : "\(error)"
        }
        switch self {
        case .fix: return nil
        case .connecting(let attempt):
            let connecting = "connecting" + (attempt == 1 ? " to gpsd" : " (attempt \(attempt))")
            return lastFailure.map { "\(retrying($0)); \(connecting)" } ?? connecting
        case .connected: return "connected, no receiver has reported yet"
        case .reconnecting(let attempt, _, let error): return "\(retrying(error)); reconnecting (attempt \(attempt))"
        case .fixLost: return "the receiver lost its fix"
        default: return description
        }
    }
}

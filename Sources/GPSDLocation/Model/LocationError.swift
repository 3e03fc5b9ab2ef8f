/// An error from a ``LocationManager`` or ``AsyncLocationManager``.
///
/// Switch over ``code``; new codes may be added, so include a `default` case. Where libgps reported the
/// error, ``libgpsCode`` holds its (negative) code and ``message`` its `gps_errstr` text.
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

        /// The code in words: `gpsd unavailable`, `timed out`, …
        public var description: String { value.rawValue }
    }

    /// What kind of failure.
    public var code: Code
    /// A sentence for people: what failed and why.
    public var message: String
    /// libgps's negative error code, where libgps reported the failure.
    public var libgpsCode: Int32?
    /// For ``Code/timedOut`` and ``Code/locationUnknown``: the best fix seen before giving up, if any.
    public var bestLocation: Location?

    /// Makes an error; mostly for tests and for sources of your own.
    ///
    /// ```swift
    /// let error = LocationError(.locationUnknown, "no fix in 30 s")
    /// ```
    public init(_ code: Code, _ message: String, libgpsCode: Int32? = nil, bestLocation: Location? = nil) {
        self.code = code
        self.message = message
        self.libgpsCode = libgpsCode
        self.bestLocation = bestLocation
    }

    /// `code: message`, e.g. `gpsd unavailable: cannot connect to gpsd at localhost:2947: …`.
    public var description: String { "\(code): \(message)" }
}

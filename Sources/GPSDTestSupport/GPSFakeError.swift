import Foundation

/// Why ``GPSFake/start(logs:cycle:once:lingerAfterEnd:waitForClient:)`` could not provide a running gpsd.
///
/// The error carries what gpsfake (and the gpsd it started) wrote to stderr, so a failing test shows the cause.
public struct GPSFakeError: Error, CustomStringConvertible, Sendable {
    /// The kind of failure. New codes may be added: match the ones you care about and keep a default.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Kind: Hashable, Sendable {
            case notInstalled, missingLog, setupFailed, spawnFailed, exited, timedOut, portUnavailable
        }

        private let kind: Kind

        /// `gpsfake` or `/usr/sbin/gpsd` is not installed (see ``GPSFake/isAvailable``).
        public static let notInstalled = Self(kind: .notInstalled)
        /// One of the logs does not exist.
        public static let missingLog = Self(kind: .missingLog)
        /// The private temporary directory or a file in it could not be made.
        public static let setupFailed = Self(kind: .setupFailed)
        /// `posix_spawn` failed (``GPSFakeError/errno`` holds its error number).
        public static let spawnFailed = Self(kind: .spawnFailed)
        /// gpsfake exited before gpsd listened (``GPSFakeError/exitStatus`` holds its wait status).
        public static let exited = Self(kind: .exited)
        /// gpsd did not listen on the port in time.
        public static let timedOut = Self(kind: .timedOut)
        /// Every port tried was taken by another process before gpsd could bind it.
        public static let portUnavailable = Self(kind: .portUnavailable)

        public var description: String {
            switch kind {
            case .notInstalled: "gpsfake or gpsd is not installed"
            case .missingLog: "log file not found"
            case .setupFailed: "could not prepare gpsfake's temporary directory"
            case .spawnFailed: "could not start gpsfake"
            case .exited: "gpsfake exited early"
            case .timedOut: "gpsd did not start listening in time"
            case .portUnavailable: "no free port for gpsd"
            }
        }
    }

    /// What went wrong.
    public let code: Code
    /// Details: the path, the port, or the command line.
    public let detail: String
    /// What gpsfake and gpsd wrote to stderr, if anything.
    public let standardError: String
    /// The error number, for ``Code/spawnFailed`` and ``Code/setupFailed``.
    public let errno: Int32?
    /// gpsfake's raw wait status, for ``Code/exited``.
    public let exitStatus: Int32?

    init(_ code: Code, _ detail: String, standardError: String = "", errno: Int32? = nil, exitStatus: Int32? = nil) {
        self.code = code
        self.detail = detail
        self.standardError = standardError
        self.errno = errno
        self.exitStatus = exitStatus
    }

    public var description: String {
        var text = "GPSFakeError(\(code)): \(detail)"
        if let errno { text += " (errno \(errno))" }
        if let exitStatus { text += " (wait status \(exitStatus))" }
        let stderr = standardError.trimmingCharacters(in: .whitespacesAndNewlines)
        if !stderr.isEmpty { text += "\ngpsfake stderr:\n\(stderr)" }
        return text
    }
}

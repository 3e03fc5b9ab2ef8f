import Glibc
import GPSDLocation
import ProcessEnd
import Synchronization

/// Standard output, written with write(2) so every record reaches a pipe at once (no stdio buffering), and never
/// waiting past the end that a signal requests (``BoundedOutput``).
struct Output: Sendable {
    /// Writing failed: the reader went away (`EPIPE`), the output took nothing for the grace after a signal, or
    /// another error.
    typealias Failure = BoundedOutput.Failure

    func write(_ text: String) throws(Failure) {
        guard !text.isEmpty else { return }
        try BoundedOutput.standardOutput.write(text)
    }
}

/// Status for people, on standard error, unless --quiet.
final class StatusReporter: Sendable {
    let quiet: Bool
    /// The manager's last status before it stopped, kept even when quiet: it explains a missing fix.
    private let lastStatus = Mutex<LocationStatus?>(nil)

    init(quiet: Bool) { self.quiet = quiet }

    /// What stood in the way of a fix at the last change (gpsd unreachable, no receiver, too few satellites), if
    /// anything did.
    var obstacle: LocationStatus? {
        lastStatus.withLock { status in
            switch status {
            case .fix?, .stopped?, nil: nil
            default: status
            }
        }
    }

    /// A change of the manager's status: kept, and said.
    func report(_ status: LocationStatus) {
        guard status != .stopped else { return }
        lastStatus.withLock { $0 = status }
        say("\(status)")
    }

    func say(_ message: String) {
        guard !quiet else { return }
        Self.writeError("whereami: \(Field.printable(message))\n")
    }

    /// Errors are printed even with --quiet: the exit status alone does not say what went wrong.
    func fail(_ message: String) {
        Self.writeError("whereami: \(Field.printable(message))\n")
    }

    /// One message to standard error with write(2), unbuffered like stderr; a failure has nowhere to be said.
    private static func writeError(_ text: String) {
        try? BoundedOutput.standardError.write(text)
    }
}

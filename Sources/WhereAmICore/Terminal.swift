import Glibc
import GPSDLocation
import ProcessEnd
import GPSDSystem

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
    /// Whether the run is one fix, which says once what it waits for (``WhereAmI/printOneFix(from:to:status:)``):
    /// then the manager's "waiting for a fix" is not said again (it is kept, as ``obstacle``), nor are its retries
    /// before a first connection. Those are its stream of epochs' alone: the fix's request fails at once then, as
    /// one fix does when gpsd cannot be reached, and the run ends.
    let oneFix: Bool
    /// The manager's last status before it stopped, kept even when quiet: it explains a missing fix; and whether it
    /// has connected.
    private let lastStatus = Locked<(status: LocationStatus?, connected: Bool)>((nil, false))

    init(quiet: Bool, oneFix: Bool = false) {
        self.quiet = quiet
        self.oneFix = oneFix
    }

    /// What stood in the way of a fix at the last change (gpsd unreachable, no receiver, too few satellites), if
    /// anything did.
    var obstacle: LocationStatus? {
        lastStatus.withLock { last in
            switch last.status {
            case .fix?, .stopped?, nil: nil
            default: last.status
            }
        }
    }

    /// A change of the manager's status: kept, and said.
    func report(_ status: LocationStatus) {
        guard status != .stopped else { return }
        let connected = lastStatus.withLock { last in
            last.status = status
            if case .connected = status { last.connected = true }
            return last.connected
        }
        if oneFix {
            switch status {
            case .waitingForFix: return
            case .reconnecting where !connected: return
            case .connecting(let attempt) where attempt > 1 && !connected: return
            default: break
            }
        }
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

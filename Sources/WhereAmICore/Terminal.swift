import CLinux
import FoundationEssentials
import Glibc
import GPSDLocation
import GPSDSystem
import Synchronization

/// Standard output, written with write(2) so every record reaches a pipe at once (no stdio buffering).
struct Output: Sendable {
    /// Writing failed: the reader went away (`EPIPE`), or another error.
    struct Failure: Error {
        var number: Int32
        var readerWentAway: Bool { number == EPIPE }
    }

    func write(_ text: String) throws(Failure) {
        guard !text.isEmpty else { return }
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(STDOUT_FILENO, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                throw Failure(number: errno)
            }
            bytes = bytes.dropFirst(written)
        }
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
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(STDERR_FILENO, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            bytes = bytes.dropFirst(written)
        }
    }
}

/// SIGINT and SIGTERM as they come, instead of ending the program: a stream can then close its document.
///
/// Caught from the moment this returns (a handler installed with sigaction(2), which writes each signal's number
/// to a pipe that a thread of its own reads), so none can slip through between setting up and the first wait.
func terminationSignals() -> AsyncStream<Int32> {
    let (stream, continuation) = AsyncStream.makeStream(of: Int32.self)
    var ends: [Int32] = [-1, -1]
    guard clinux_pipe2(&ends, O_CLOEXEC) == 0 else {
        continuation.finish()   // no pipe: the signals keep their default action and end the program
        return stream
    }
    // The reader first: handlers forwarding to a pipe that nobody reads would swallow the signals.
    let readEnd = ends[0]
    guard let reader = try? SystemThread(name: "signals", {
        var byte: UInt8 = 0
        while true {
            let count = read(readEnd, &byte, 1)
            if count == 1 { continuation.yield(Int32(byte)) } else if count < 0 && errno == EINTR { continue } else { break }
        }
        continuation.finish()
    }) else {
        continuation.finish()   // no thread: the signals keep their default action
        return stream
    }
    reader.detach()
    let signals = [SIGINT, SIGTERM]
    if clinux_forward_signals(signals, Int32(signals.count), ends[1]) != 0 {
        close(ends[1])   // not forwarded: the reader sees the end of the pipe and finishes the stream
    }
    return stream
}

import Dispatch
import Foundation
import GPSDLocation

/// Standard output, written with write(2) so every record reaches a pipe at once (no stdio buffering).
/// A reader that went away (`whereami -f | head -1`) ends the program quietly with status 0.
struct Output: Sendable {
    func write(_ text: String) {
        guard !text.isEmpty else { return }
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(STDOUT_FILENO, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                exit(errno == EPIPE ? 0 : 74)
            }
            bytes = bytes.dropFirst(written)
        }
    }
}

/// Status for people, on standard error, unless --quiet.
struct StatusReporter: Sendable {
    let quiet: Bool

    func say(_ message: String) {
        guard !quiet else { return }
        FileHandle.standardError.write(Data("whereami: \(message)\n".utf8))
    }

    /// Errors are printed even with --quiet: the exit status alone does not say what went wrong.
    func fail(_ message: String) {
        FileHandle.standardError.write(Data("whereami: \(message)\n".utf8))
    }
}

/// Whether a stream saw its first fix before the timeout.
final class FirstFixWatch: Sendable {
    private let state = Locked((seen: false, expired: false))

    func sawFix() { state.withLock { $0.seen = true } }

    /// Marks the wait as expired if no fix came; true if it did expire.
    func expireUnlessSeen() -> Bool {
        state.withLock { state in
            if !state.seen { state.expired = true }
            return state.expired
        }
    }

    var expired: Bool { state.withLock { $0.expired } }
}

/// What a signal should stop, and whether one came before there was anything to stop.
final class Interruption: Sendable {
    private let state = Locked<(stop: (@Sendable () -> Void)?, fired: Bool)>((nil, false))

    /// Calls `stop` now if a signal came already, else when one comes.
    func attach(_ stop: @escaping @Sendable () -> Void) {
        let fired = state.withLock { state in
            state.stop = stop
            return state.fired
        }
        if fired { stop() }
    }

    func fire() {
        let stop = state.withLock { state in
            state.fired = true
            return state.stop
        }
        stop?()
    }
}

/// Runs `handler` on SIGINT/SIGTERM instead of dying, so a stream can finish its document.
final class SignalWatcher {
    private let sources: [any DispatchSourceSignal]

    init(signals: [Int32], handler: @escaping @Sendable () -> Void) {
        sources = signals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler(handler: handler)
            source.resume()
            return source
        }
    }

    func cancel() { sources.forEach { $0.cancel() } }
}

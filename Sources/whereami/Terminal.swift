import Dispatch
import Foundation
import GPSDLocation

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

/// SIGINT and SIGTERM as they come, instead of ending the program: a stream can then close its document. The
/// signals are caught from the moment this is made until the sequence ends.
func terminationSignals() -> AsyncStream<Int32> {
    let (stream, continuation) = AsyncStream.makeStream(of: Int32.self)
    let sources = SignalSources([SIGINT, SIGTERM].map { number in
        signal(number, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
        source.setEventHandler { continuation.yield(number) }
        source.resume()
        return source
    })
    continuation.onTermination = { _ in sources.cancel() }
    return stream
}

/// Dispatch's signal sources, which may be cancelled from any thread (Dispatch does not mark them Sendable).
private final class SignalSources: @unchecked Sendable {
    private let sources: [any DispatchSourceSignal]
    init(_ sources: [any DispatchSourceSignal]) { self.sources = sources }
    func cancel() { sources.forEach { $0.cancel() } }
}

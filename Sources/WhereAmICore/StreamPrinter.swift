import Dispatch
import FoundationEssentials
import Glibc
import GPSDLocation
import GPSDSystem

/// Prints a stream's records (`--follow`) from the manager's reader thread: each fix is turned into its record and
/// written to standard output by the thread that decided it, with write(2), no task or queue in between.
///
/// A live gpsd cannot wait, and a real-time handler must not block: there a record is written on the reader
/// thread only while standard output takes it at once (a regular file always does; a pipe, a terminal or a
/// socket is asked with poll(2)). While a reader lags, fixes wait instead, the newest ``backlogLimit`` kept, and
/// a writer of their own writes them as the reader takes them, blocking there; the reader thread reads on. A
/// replay can wait: there every record is written on the replay's thread, blocking while the reader lags, which
/// holds the replay back, so no fix is lost.
final class StreamPrinter: Sendable {
    /// What the stream's loop hears from the printer.
    enum Event: Sendable {
        /// The first record is on its way.
        case firstFix
        /// The printer takes no more fixes: `--count` is reached, or a write failed.
        case stopped
    }

    /// How many fixes wait at most while the reader of a live stream lags: 16, the newest.
    static let backlogLimit = 16

    private struct State {
        var writer: any LocationWriter
        /// Records written or on their way.
        var printed = 0
        /// The time of the last fix taken, for `--interval`.
        var lastTime: Date?
        /// No more fixes are taken: `--count` is reached, a write failed, or the stream is over.
        var stopped = false
        var failure: Output.Failure?
        /// Fixes waiting for standard output (live only), and whether the writer of them is at work.
        var backlog: [Location] = []
        var draining = false
        /// Who waits for the writer of the backlog to finish (``finish()``).
        var drained: [CheckedContinuation<Void, Never>] = []
    }

    private let state: Locked<State>
    private let output: Output
    private let count: Int?
    private let interval: Double?
    /// Whether the source waits for its consumers (a replay): then records are written where they are decided.
    private let canWait: Bool
    /// Whether standard output must be asked before a write (anything but a regular file).
    private let asksFirst: Bool
    private let tell: @Sendable (Event) -> Void
    /// What a fix's record carries beside it, asked as the record is made (its age then, the heading then).
    private let context: @Sendable (Location) -> RecordContext
    private let backlogQueue = DispatchQueue(label: "whereami.stdout")

    init(
        writer: any LocationWriter, output: Output, count: Int?, interval: Double?, canWait: Bool,
        context: @escaping @Sendable (Location) -> RecordContext = { _ in RecordContext() },
        tell: @escaping @Sendable (Event) -> Void
    ) {
        state = Locked(State(writer: writer))
        self.output = output
        self.count = count
        self.interval = interval
        self.canWait = canWait
        self.tell = tell
        self.context = context
        var status = stat()
        asksFirst = fstat(STDOUT_FILENO, &status) != 0 || status.st_mode & S_IFMT != S_IFREG
    }

    private enum Step {
        case none
        case write(String)
        case queue(startWriter: Bool)
    }

    /// The real-time handler: takes `fix` if it passes `--interval` and the printer has not stopped, and writes its
    /// record now, or leaves it for the writer of the backlog.
    func print(_ fix: Location) {
        let takesItNow = canWait || outputTakesItNow()
        // Asked before the printer's lock is taken (it reads the manager's heading); used if written now.
        let context = takesItNow ? self.context(fix) : RecordContext()
        var (first, last) = (false, false)
        let step = state.withLock { state -> Step in
            guard !state.stopped else { return .none }
            // A time before the last one printed (a receiver's clock reset, a log replayed again) starts the
            // interval over rather than holding everything back until time catches up.
            if let interval, let lastTime = state.lastTime,
               (0..<interval).contains(fix.timestamp.timeIntervalSince(lastTime)) { return .none }
            state.lastTime = fix.timestamp
            state.printed += 1
            (first, last) = (state.printed == 1, count.map { state.printed >= $0 } ?? false)
            if last { state.stopped = true }
            guard state.draining || !takesItNow else { return .write(state.writer.record(fix, context)) }
            state.backlog.append(fix)
            if state.backlog.count > Self.backlogLimit {
                state.backlog.removeFirst()
                state.printed -= 1
            }
            defer { state.draining = true }
            return .queue(startWriter: !state.draining)
        }
        switch step {
        case .none: return
        case .write(let record): write(record)
        case .queue(let startWriter): if startWriter { backlogQueue.async { self.writeBacklog() } }
        }
        if first { tell(.firstFix) }
        if last { tell(.stopped) }
    }

    /// Stops taking fixes, waits for the backlog to be written, and hands back the writer (for the footer) and
    /// the failure that stopped a write, if any.
    func finish() async -> (any LocationWriter, Output.Failure?) {
        await withCheckedContinuation { continuation in
            let waits = state.withLock { state -> Bool in
                state.stopped = true
                guard state.draining else { return false }
                state.drained.append(continuation)
                return true
            }
            if !waits { continuation.resume() }
        }
        return state.withLock { ($0.writer, $0.failure) }
    }

    /// Whether a record written now goes out without blocking: a pipe or terminal that has room, or an error to
    /// report (a reader that has gone).
    private func outputTakesItNow() -> Bool {
        guard asksFirst else { return true }
        var descriptor = pollfd(fd: STDOUT_FILENO, events: Int16(POLLOUT), revents: 0)
        return poll(&descriptor, 1, 0) > 0
    }

    private func write(_ text: String) {
        do {
            try output.write(text)
        } catch {
            let first = state.withLock { state -> Bool in
                defer { state.stopped = true }
                guard state.failure == nil else { return false }
                state.failure = error
                return true
            }
            if first { tell(.stopped) }
        }
    }

    /// The writer of the backlog, on a queue of its own: writes what waits, oldest first, until nothing does. It
    /// stops under the lock that finds nothing waiting, so a fix queued later starts it again. The records are made
    /// as they are written, each with its context then (its fix's age as it is written); fixes queued meanwhile
    /// wait for the next round, since the writer is at work (``State/draining``).
    private func writeBacklog() {
        while true {
            let next = state.withLock { state -> (fixes: [Location], finished: [CheckedContinuation<Void, Never>]) in
                guard !state.backlog.isEmpty, state.failure == nil else {
                    defer { (state.draining, state.backlog, state.drained) = (false, [], []) }
                    return ([], state.drained)
                }
                defer { state.backlog = [] }
                return (state.backlog, [])
            }
            guard !next.fixes.isEmpty else {
                for continuation in next.finished { continuation.resume() }
                return
            }
            let contexts = next.fixes.map(context)
            let text = state.withLock { state in
                var text = ""
                for (fix, context) in zip(next.fixes, contexts) { text += state.writer.record(fix, context) }
                return text
            }
            write(text)
        }
    }
}

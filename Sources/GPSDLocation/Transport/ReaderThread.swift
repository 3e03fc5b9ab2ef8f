import Foundation
import Synchronization

/// The runs of a source that reads on a thread of its own (a gpsd session, a recording): `start` ends the
/// previous run and spawns a thread for a new one; `stop` ends the current run. A run's thread learns it
/// must end through ``Run/isStopped`` and its wake pipe, so it never blocks a caller.
final class SourceThread: Sendable {
    /// One run's life, shared by its thread and the source.
    final class Run: Sendable {
        /// Wakes the run's thread from poll(2): to stop, or to send a command.
        let wake = WakePipe()
        private let stopped = Atomic(false)
        private let pollRequested = Atomic(false)

        var isStopped: Bool { stopped.load(ordering: .acquiring) }

        /// Whether a `?POLL;` was asked for since the last call (and clears the request).
        func takePollRequest() -> Bool { pollRequested.exchange(false, ordering: .acquiringAndReleasing) }

        func requestPoll() {
            pollRequested.store(true, ordering: .releasing)
            wake.signal()
        }

        func end() {
            stopped.store(true, ordering: .releasing)
            wake.signal()
        }
    }

    private let name: String
    /// The current run, and whether a POLL was asked for before it started (the manager decides to start
    /// and to poll on different threads; a poll must not be lost in between).
    private let current = Locked<(run: Run?, pollPending: Bool)>((nil, false))

    init(name: String) { self.name = name }

    /// Ends the current run, if any, and runs `body` for a new one on a new thread.
    func start(_ body: @escaping @Sendable (Run) -> Void) {
        let run = Run()
        let (previous, poll) = current.withLock { current in
            defer { current = (run, false) }
            return current
        }
        previous?.end()
        if poll { run.requestPoll() }
        let thread = Thread { body(run) }
        thread.name = name
        thread.start()
    }

    /// Ends the current run, if any.
    func stop() {
        current.withLock { current in
            defer { current = (nil, false) }
            return current.run
        }?.end()
    }

    /// Asks the current run to send `?POLL;`, or the next run if none is current.
    func requestPoll() {
        let run = current.withLock { current -> Run? in
            if current.run == nil { current.pollPending = true }
            return current.run
        }
        run?.requestPoll()
    }
}

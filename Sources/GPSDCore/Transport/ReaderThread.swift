import GPSDSystem
import Synchronization

/// What a session's thread takes from the system besides the thread: the pipe that wakes it. Tests make it fail.
package struct SessionResources: Sendable {
    let makePipe: @Sendable () throws(SystemError) -> (readEnd: Int32, writeEnd: Int32)

    /// The real pipe.
    package static let system = SessionResources(makePipe: { () throws(SystemError) in try Syscall.pipe() })

    /// Pipes the system refuses with `errno` `number` (`EMFILE`: too many open files, say).
    package static func refusingPipes(_ number: Int32) -> SessionResources {
        SessionResources(makePipe: { () throws(SystemError) in throw SystemError(function: "pipe2", number: number) })
    }
}

/// The session of a source that reads on a thread of its own (a gpsd connection, a replay): the thread, the
/// pipe that wakes it, and what the manager asks of it.
///
/// The thread runs `body`, which checks ``isClosed`` between reads and waits in poll(2) on ``wake``, so
/// ``close()`` takes effect at once and then joins the thread.
final class ReaderThread: SourceSession {
    /// Wakes the thread from poll(2): to close, or to send a command.
    let wake: WakePipe
    private let closed = Atomic(false)
    private let heldFixRequested = Atomic(false)
    private let started = Atomic<Int32>(0)
    private let finished = Atomic(false)
    /// The thread, once started, and whether it is in a call that cannot be interrupted.
    private let control = Locked<(thread: SystemThread?, closed: Bool, uninterruptible: Bool)>((nil, false, false))

    private init(wake: WakePipe) { self.wake = wake }

    /// Starts `body` on a new thread named `name`.
    /// - Throws: ``LocationError/Code/resourceUnavailable`` if the system refuses the pipe or the thread.
    static func start(
        name: String, resources: SessionResources, _ body: @escaping @Sendable (ReaderThread) -> Void
    ) throws(LocationError) -> ReaderThread {
        let reader: ReaderThread
        do throws(SystemError) {
            reader = ReaderThread(wake: WakePipe(try resources.makePipe()))
            let thread = try SystemThread(name: name) {
                reader.started.store(currentKernelThreadID(), ordering: .releasing)
                body(reader)
                reader.finished.store(true, ordering: .releasing)
            }
            reader.control.withLock { $0.thread = thread }
        } catch {
            throw error.locationError(.resourceUnavailable, "cannot start the \(name) thread")
        }
        return reader
    }

    /// Whether the session is closing: the thread stops reading and returns.
    var isClosed: Bool { closed.load(ordering: .acquiring) }

    /// The kernel's id of the thread once it runs (`/proc/self/task/<id>`), for tests that check it has gone.
    var kernelThreadID: Int32? {
        let id = started.load(ordering: .acquiring)
        return id == 0 ? nil : id
    }

    /// Whether the thread has run its body to the end (the kernel removes the thread itself a moment later).
    var hasFinished: Bool { finished.load(ordering: .acquiring) }

    /// Whether ``requestHeldFix()`` was called since the last call (and clears the request).
    func takeHeldFixRequest() -> Bool { heldFixRequested.exchange(false, ordering: .acquiringAndReleasing) }

    func requestHeldFix() {
        heldFixRequested.store(true, ordering: .releasing)
        wake.signal()
    }

    /// Runs `body`, a call that nothing can interrupt (a host name lookup), unless the session is closed
    /// already (then `nil`). A session closed meanwhile does not wait for it: see ``close()``.
    func uninterruptible<Result>(_ body: () -> Result) -> Result? {
        let open = control.withLock { control -> Bool in
            guard !control.closed else { return false }
            control.uninterruptible = true
            return true
        }
        guard open else { return nil }
        defer { control.withLock { $0.uninterruptible = false } }
        return body()
    }

    /// Ends the session and waits for its thread to end. While the thread is in an ``uninterruptible(_:)``
    /// call (a name lookup, which blocks for as long as the system's resolver allows), close does not wait: the
    /// thread ends by itself when the call returns, and delivers nothing more. Called on the thread itself, it
    /// cannot wait either; a later call from another thread joins the thread (one never joined is detached
    /// when it goes).
    func close() {
        let (thread, wait) = control.withLock { control in
            control.closed = true
            return (control.thread, !control.uninterruptible)
        }
        closed.store(true, ordering: .releasing)
        wake.signal()
        guard let thread, !thread.isCurrent else { return }
        if wait { thread.join() } else { thread.detach() }
    }

    var isOnItsThread: Bool { control.withLock { $0.thread?.isCurrent ?? false } }
}

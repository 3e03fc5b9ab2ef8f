import CLinux
import Glibc

/// A POSIX thread that can be joined: the readers of gpsd sessions and replays, the fleet's uplink and the
/// processes' signal and terminal watchers run on these, off Swift's cooperative pool.
///
/// ``join()`` waits until the thread has ended; called on the thread itself (a session closed by an event it
/// delivered), it detaches instead, and the thread ends as soon as it returns. A thread never joined is
/// detached when this object goes, so no thread's resources are left behind.
public final class SystemThread: Sendable {
    private enum Disposal { case running, joined, detached }

    private let thread: pthread_t
    private let disposal = Locked(Disposal.running)

    /// Starts `body` on a new thread named `name` (cut to the 15 bytes Linux keeps).
    public init(name: String, _ body: @escaping @Sendable () -> Void) throws(SystemError) {
        let box = Unmanaged.passRetained(Box(name: name, body: body))
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { context in
            let box = Unmanaged<Box>.fromOpaque(context!).takeRetainedValue()
            _ = clinux_name_this_thread(box.name)   // a name only helps debugging: its failure is harmless
            box.body()
            return nil
        }, box.toOpaque())
        guard result == 0 else {
            box.release()
            throw SystemError(function: "pthread_create", number: result)
        }
        self.thread = thread
    }

    /// Starts `body` on a new thread named `name`: the same as ``init(name:_:)``.
    public static func start(name: String, _ body: @escaping @Sendable () -> Void) throws(SystemError) -> SystemThread {
        try SystemThread(name: name, body)
    }

    deinit {
        if disposal.withLock({ $0 }) == .running { pthread_detach(thread) }
    }

    /// Whether the caller is running on this thread.
    public var isCurrent: Bool { pthread_equal(pthread_self(), thread) != 0 }

    /// Waits until the thread has ended (or, on the thread itself, lets it end when it returns). Once only:
    /// later calls, and calls after ``detach()``, return at once.
    public func join() {
        let current = isCurrent
        let first = disposal.withLock { disposal -> Bool in
            guard disposal == .running else { return false }
            disposal = current ? .detached : .joined
            return true
        }
        guard first else { return }
        if current {
            pthread_detach(thread)
        } else {
            pthread_join(thread, nil)
        }
    }

    /// Lets the thread end by itself, without waiting for it; its resources go when it returns.
    public func detach() {
        let first = disposal.withLock { disposal -> Bool in
            guard disposal == .running else { return false }
            disposal = .detached
            return true
        }
        if first { pthread_detach(thread) }
    }

    private final class Box {
        let name: String
        let body: @Sendable () -> Void
        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }
}

/// The kernel's id of the calling thread, as `/proc/self/task/<id>` names it.
package func currentKernelThreadID() -> Int32 { clinux_gettid() }

extension SystemThread {
    /// The calling thread's POSIX id, to recognise it later (a delegate callback running on it, say).
    package static var currentID: UInt { UInt(pthread_self()) }
}

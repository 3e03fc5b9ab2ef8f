import Glibc

/// Starts `body` on a POSIX thread of its own, detached: off Swift's cooperative pool, for work that blocks in
/// system calls (poll(2) on a terminal, a pipe of signals). The thread's resources go when `body` returns.
package func startDetachedThread(_ body: @escaping @Sendable () -> Void) throws(BoundedOutput.Failure) {
    let box = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
    var thread = pthread_t()
    let result = pthread_create(&thread, nil, { body in
        Unmanaged<ThreadBody>.fromOpaque(body!).takeRetainedValue().run()
        return nil
    }, box)
    guard result == 0 else {
        Unmanaged<ThreadBody>.fromOpaque(box).release()
        throw .init(number: result)
    }
    pthread_detach(thread)
}

/// A closure for pthread_create, which takes one pointer.
private final class ThreadBody {
    let run: @Sendable () -> Void
    init(_ run: @escaping @Sendable () -> Void) { self.run = run }
}

import Glibc

/// A value behind a lock, usable from any thread: the one kind of lock of GPSDLocation and GPSDFleet.
///
/// A pthread mutex and condition variable rather than `Synchronization.Mutex`: on Linux, `Mutex` waits with raw
/// futex calls that ThreadSanitizer cannot see, so every access under it is reported as a race, drowning real
/// ones. Critical regions here are short and never call out: decide under the lock, act after it.
/// ``withLock(when:_:)`` waits for a condition that another thread's ``withLock(_:)`` makes true.
public final class Locked<Value>: @unchecked Sendable {
    // pthread objects must not move: they live in memory of their own, never in a Swift stored property.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    private var value: Value
    /// Threads waiting in ``withLock(when:_:)``: only then does a change need to wake anybody.
    private var waiters = 0

    public init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        condition = .allocate(capacity: 1)
        // With default attributes these cannot fail on Linux (no resources are taken).
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer {
            if waiters > 0 { pthread_cond_broadcast(condition) }
            pthread_mutex_unlock(mutex)
        }
        return try body(&value)
    }

    /// Waits, with the lock released, until `ready` holds; then runs `body` under the lock.
    public func withLock<Result>(when ready: (Value) -> Bool, _ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer {
            if waiters > 0 { pthread_cond_broadcast(condition) }
            pthread_mutex_unlock(mutex)
        }
        waiters += 1
        while !ready(value) { pthread_cond_wait(condition, mutex) }
        waiters -= 1
        return try body(&value)
    }
}

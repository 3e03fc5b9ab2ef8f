import Foundation

/// A value behind a lock, usable from any thread: the package's one kind of lock.
///
/// An `NSCondition` (a pthread mutex and condition variable) rather than `Synchronization.Mutex`: on Linux,
/// `Mutex` waits with raw futex calls that ThreadSanitizer cannot see, so every access under it is reported as a
/// race, drowning real ones. Critical regions here are short and never call out: decide under the lock, act
/// after it. ``withLock(when:_:)`` waits for a condition that another thread's ``withLock(_:)`` makes true.
package final class Locked<Value>: @unchecked Sendable {
    private let condition = NSCondition()
    private var value: Value
    /// Threads waiting in ``withLock(when:_:)``: only then does a change need to wake anybody.
    private var waiters = 0

    package init(_ value: Value) {
        self.value = value
    }

    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        condition.lock()
        defer {
            if waiters > 0 { condition.broadcast() }
            condition.unlock()
        }
        return try body(&value)
    }

    /// Waits, with the lock released, until `ready` holds; then runs `body` under the lock.
    package func withLock<Result>(when ready: (Value) -> Bool, _ body: (inout Value) throws -> Result) rethrows -> Result {
        condition.lock()
        defer {
            if waiters > 0 { condition.broadcast() }
            condition.unlock()
        }
        waiters += 1
        while !ready(value) { condition.wait() }
        waiters -= 1
        return try body(&value)
    }
}

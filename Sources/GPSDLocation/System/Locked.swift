import Foundation

/// A value behind a lock, usable from any thread: the package's one kind of lock.
///
/// A pthread-backed `NSLock` rather than `Synchronization.Mutex`: on Linux, `Mutex` waits with raw futex
/// calls that ThreadSanitizer cannot see, so every access under it is reported as a race, drowning real ones.
/// Critical regions here are short and never call out: decide under the lock, act after it.
package final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    package init(_ value: Value) {
        self.value = value
    }

    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

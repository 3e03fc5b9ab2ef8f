import Foundation

/// A value behind an `NSLock`: the one piece of shared mutable state in ``GPSFake``, usable from any thread.
///
/// (Foundation's lock rather than `Synchronization.Mutex` keeps this target free of platform availability checks.)
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

package import GPSDSystem

/// Tasks waiting for a count kept by a test double (timers sleeping, sessions opened) to reach a level: how a
/// test awaits an event it can observe instead of wall-clock time.
package struct LevelWaiters: Sendable {
    private var waiters: [(level: Int, continuation: CheckedContinuation<Void, Never>)] = []

    package init() {}

    /// Takes out the waiters that the count, now `count`, has reached: the caller resumes them after unlocking.
    package mutating func reached(_ count: Int) -> [CheckedContinuation<Void, Never>] {
        let ready = waiters.filter { $0.level <= count }.map(\.continuation)
        waiters.removeAll { $0.level <= count }
        return ready
    }

    fileprivate mutating func add(_ level: Int, _ continuation: CheckedContinuation<Void, Never>) {
        waiters.append((level, continuation))
    }
}

extension Locked {
    /// Returns once `count` of the value is at least `level`; `waiters` is where the value keeps those who wait,
    /// and whoever raises the count resumes what ``LevelWaiters/reached(_:)`` hands back.
    package func wait(
        until count: @escaping (Value) -> Int, reaches level: Int, waiters: WritableKeyPath<Value, LevelWaiters>
    ) async {
        await withCheckedContinuation { continuation in
            let ready = withLock { value -> Bool in
                if count(value) >= level { return true }
                value[keyPath: waiters].add(level, continuation)
                return false
            }
            if ready { continuation.resume() }
        }
    }
}

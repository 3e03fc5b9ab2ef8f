import GPSDLocation
import GPSDSystem


/// A `Clock` that moves only when a test calls ``advance(by:)``. Sleepers are observable: a test awaits
/// ``waitForSleepers(_:)`` instead of guessing with wall-clock time. Cancelling a sleeping task ends its sleep
/// with `CancellationError` at once.
package final class ManualClock: Clock, Sendable {
    package typealias Duration = Swift.Duration

    package struct Instant: InstantProtocol, CustomStringConvertible {
        package var offset: Swift.Duration

        package init(offset: Swift.Duration) { self.offset = offset }

        package func advanced(by duration: Swift.Duration) -> Instant { Instant(offset: offset + duration) }
        package func duration(to other: Instant) -> Swift.Duration { other.offset - offset }
        package static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
        package var description: String { "\(offset)" }
    }

    private struct Sleeper {
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var sleepers: [Int: Sleeper] = [:]
        var cancelledBeforeSleeping: Set<Int> = []
        var nextID = 0
        var sleeperWaiters = LevelWaiters()
        var onNextSleep: (@Sendable () -> Void)?
    }

    private let state = Locked(State())

    package init() {}

    package var now: Instant { state.withLock { $0.now } }
    package var minimumResolution: Swift.Duration { .zero }

    /// How many sleeps are pending.
    package var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    package func sleep(until deadline: Instant, tolerance: Swift.Duration? = nil) async throws {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Outcome { case wait([CheckedContinuation<Void, Never>], (@Sendable () -> Void)?), fire, cancel }
                let outcome = state.withLock { state -> Outcome in
                    if state.cancelledBeforeSleeping.remove(id) != nil { return .cancel }
                    if deadline <= state.now { return .fire }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    defer { state.onNextSleep = nil }
                    return .wait(state.sleeperWaiters.reached(state.sleepers.count), state.onNextSleep)
                }
                switch outcome {
                case .cancel: continuation.resume(throwing: CancellationError())
                case .fire: continuation.resume()
                case .wait(let ready, let hook):
                    hook?()
                    ready.forEach { $0.resume() }
                }
            }
        } onCancel: {
            let sleeper = state.withLock { state -> Sleeper? in
                if let sleeper = state.sleepers.removeValue(forKey: id) { return sleeper }
                state.cancelledBeforeSleeping.insert(id)
                return nil
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
        // A cancellation that came after the sleep ended leaves no mark behind.
        _ = state.withLock { $0.cancelledBeforeSleeping.remove(id) }
    }

    /// Moves time forward and wakes every sleeper whose deadline has come, in deadline order.
    package func advance(by duration: Swift.Duration) {
        let due = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            state.now = state.now.advanced(by: duration)
            let now = state.now
            let due = state.sleepers.filter { $0.value.deadline <= now }.sorted { $0.value.deadline < $1.value.deadline }
            for (id, _) in due { state.sleepers.removeValue(forKey: id) }
            return due.map(\.value.continuation)
        }
        due.forEach { $0.resume() }
    }

    /// Runs `body` once, on the sleeping task's thread, just as the next sleep has begun: another thread acting at
    /// that instant.
    package func onNextSleep(_ body: @escaping @Sendable () -> Void) {
        state.withLock { $0.onNextSleep = body }
    }

    /// Returns once at least `count` sleeps are pending.
    package func waitForSleepers(_ count: Int) async {
        await state.wait(until: \.sleepers.count, reaches: count, waiters: \.sleeperWaiters)
    }
}

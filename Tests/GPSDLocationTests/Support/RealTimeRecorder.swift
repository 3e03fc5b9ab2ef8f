import Foundation
import GPSDLocation
import GPSDSystem

/// What a real-time subscription's handler and `onEnd` were called with, in order, and on which threads.
final class RealTimeRecorder: Sendable {
    private struct Calls {
        var fixes: [Location] = []
        var ends: [LocationError?] = []
        /// The thread of each call, fixes and ends alike, in order.
        var threads: [UInt] = []
        var threadNames: Set<String> = []
    }

    private let calls = Locked(Calls())

    var fixes: [Location] { calls.withLock { $0.fixes } }
    var ends: [LocationError?] { calls.withLock { $0.ends } }
    var threads: [UInt] { calls.withLock { $0.threads } }
    var threadNames: Set<String> { calls.withLock { $0.threadNames } }

    /// The handler: records the fix, then runs `then`.
    func handler(then: @escaping @Sendable (Location) -> Void = { _ in }) -> @Sendable (Location) -> Void {
        { fix in
            self.record { $0.fixes.append(fix) }
            then(fix)
        }
    }

    /// `onEnd`: records the end, then runs `then`.
    func onEnd(then: @escaping @Sendable (LocationError?) -> Void = { _ in }) -> @Sendable (LocationError?) -> Void {
        { error in
            self.record { $0.ends.append(error) }
            then(error)
        }
    }

    private func record(_ change: (inout Calls) -> Void) {
        let name = Self.currentThreadName
        calls.withLock { calls in
            change(&calls)
            calls.threads.append(SystemThread.currentID)
            calls.threadNames.insert(name)
        }
    }

    /// The calling thread's name, as Linux keeps it (15 bytes at most).
    private static var currentThreadName: String {
        let comm = try? String(contentsOfFile: "/proc/self/task/\(currentKernelThreadID())/comm", encoding: .utf8)
        return comm?.trimmingCharacters(in: .newlines) ?? "?"
    }
}

extension LocationManager {
    /// ``LocationManager/realTimeUpdates(desiredAccuracy:distanceFilter:delivery:onEnd:_:)`` as the public API makes
    /// it, but for the debug-build check of each call against ``RealTimeSubscription/handlerTimeLimit``. That check
    /// measures wall-clock time, which a busy machine stretches: a correct handler that recorded a fix was once
    /// timed at 0.14 s, and the check stopped the whole test process. The tests of the check run in child processes
    /// (RealTimeReplayTests); the rest of these tests are about what the handler is given.
    func untimedRealTimeUpdates(
        desiredAccuracy: Double? = nil,
        distanceFilter: Double? = nil,
        delivery: EpochDelivery = .asReported,
        onEnd: (@Sendable (LocationError?) -> Void)? = nil,
        _ handler: @escaping @Sendable (Location) -> Void
    ) -> RealTimeSubscription {
        realTimeUpdates(
            .continuous(desiredAccuracy: desiredAccuracy, distanceFilter: distanceFilter, delivery: delivery),
            timingCalls: false, onEnd: onEnd, handler)
    }
}

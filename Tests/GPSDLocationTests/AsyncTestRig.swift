import Foundation
import GPSDLocation
import GPSDTestSupport

// The rig shared by the Async*Tests files: an AsyncLocationManager driven by hand, and how its requests end.

/// How one request ended.
enum AsyncOutcome: Sendable, Equatable, CustomStringConvertible {
    case fix(Location)
    case error(LocationError)
    case cancelled
    case unexpected(String)

    /// Runs `body` and captures how it ended.
    static func of(_ body: () async throws -> Location) async -> AsyncOutcome {
        do {
            return .fix(try await body())
        } catch let error as LocationError {
            return .error(error)
        } catch is CancellationError {
            return .cancelled
        } catch {
            return .unexpected(String(describing: error))
        }
    }

    var locationError: LocationError? {
        if case .error(let error) = self { error } else { nil }
    }

    var description: String {
        switch self {
        case .fix(let location): "fix \(location.shortDescription)"
        case .error(let error): "error \(error.code), best \(error.bestLocation?.shortDescription ?? "nil")"
        case .cancelled: "cancelled"
        case .unexpected(let text): "unexpected \(text)"
        }
    }
}

extension Location {
    /// The second of a `Location.sample` and its accuracy, for messages: "17 ±5.0".
    var shortDescription: String {
        let second = timestamp.map { Int($0.timeIntervalSince1970) - 1_748_779_200 }.map(String.init) ?? "?"
        return "\(second) ±\(horizontalAccuracy.map { "\($0)" } ?? "?")"
    }
}

/// An `AsyncLocationManager` on a `ScriptedSource`, a `ManualManagerClock` and a `ManualClock` for timeouts.
struct AsyncRig: Sendable {
    let source: ScriptedSource
    /// What the manager runs: the scripted source, observed.
    let watch: AsyncObservedSource
    let managerClock = ManualManagerClock()
    let clock = ManualClock()
    let gps: AsyncLocationManager

    init() {
        let source = ScriptedSource()
        self.source = source
        let watch = AsyncObservedSource(source)
        self.watch = watch
        let manager = LocationManager(source: watch, clock: managerClock)
        gps = AsyncLocationManager(manager: manager)
        _ = manager.addObserver { event in
            switch event {
            case .failed, .finished: watch.noteRunEnded()
            case .location, .satellites: break
            }
        }
    }

    /// Starts a request in a task of its own; the task's value is how it ended.
    func request(
        timeout: Duration = .seconds(10), maximumAge: Duration? = nil, desiredAccuracy: Double? = nil
    ) -> Task<AsyncOutcome, Never> {
        let (gps, clock) = (gps, clock)
        return Task {
            await AsyncOutcome.of {
                try await gps.requestLocation(
                    timeout: timeout, maximumAge: maximumAge, desiredAccuracy: desiredAccuracy, clock: clock)
            }
        }
    }
}

/// Forwards to a `ScriptedSource` and lets a test await the end of runs: a run ends when the manager stops the
/// source, or when the manager handles a failure or the end of a recording (the run is then over without a
/// `stop()`). Needed where the last holder of the watch leaves on a timeout: the timeout releases the watch on
/// the timer's task, after resuming its caller, so "the caller returned" does not yet mean "the watch stopped".
/// An optional one-shot hook runs inside `start`, before or after the scripted source starts: it stands for
/// another thread acting at that instant.
final class AsyncObservedSource: LocationSource {
    enum HookTiming: Sendable { case beforeStarting, afterStarting }

    private struct State {
        var starts = 0
        var stops = 0
        var ends = 0
        /// Whether the last of start, stop and end-of-run seen was a start.
        var running = false
        var onStart: (timing: HookTiming, hook: @Sendable () -> Void)?
        var idleWaiters: [CheckedContinuation<Void, Never>] = []

        mutating func takeIdleWaitersIfIdle() -> [CheckedContinuation<Void, Never>] {
            guard stops + ends >= starts else { return [] }
            defer { idleWaiters = [] }
            return idleWaiters
        }
    }

    let scripted: ScriptedSource
    private let state = Locked(State())

    init(_ scripted: ScriptedSource) { self.scripted = scripted }

    /// Runs `hook` inside the next `start`, once: before the source starts (a `stop()` on another thread that
    /// overtakes this start), or after (another thread acting just as the source has started).
    func onNextStart(_ timing: HookTiming, _ hook: @escaping @Sendable () -> Void) {
        state.withLock { $0.onStart = (timing, hook) }
    }

    func start(_ handler: @escaping @Sendable (SourceEvent) -> Void) {
        let onStart = state.withLock { state in
            state.starts += 1
            defer { state.onStart = nil }
            return state.onStart
        }
        if let onStart, onStart.timing == .beforeStarting { onStart.hook() }
        scripted.start(handler)
        state.withLock { $0.running = true }
        if let onStart, onStart.timing == .afterStarting { onStart.hook() }
    }

    func stop() {
        scripted.stop()
        state.withLock { state in
            state.stops += 1
            state.running = false
            return state.takeIdleWaitersIfIdle()
        }.forEach { $0.resume() }
    }

    func poll() { scripted.poll() }

    /// Called from a manager observer when the manager handled a failure or the end of a recording.
    func noteRunEnded() {
        state.withLock { state in
            state.ends += 1
            state.running = false
            return state.takeIdleWaitersIfIdle()
        }.forEach { $0.resume() }
    }

    /// Runs the manager ended by a failure or the end of a recording.
    var runEnds: Int { state.withLock { $0.ends } }

    /// Whether the source was last started, rather than stopped or ended by the manager: unlike
    /// `ScriptedSource.isRunning`, false once the manager ended a run on a failure.
    var isRunning: Bool { state.withLock { $0.running } }

    /// Whether every run started has ended now.
    var isIdle: Bool { state.withLock { $0.stops + $0.ends >= $0.starts } }

    /// Returns once every run started has ended: no watch is held.
    func waitUntilIdle() async {
        await withCheckedContinuation { continuation in
            let idle = state.withLock { state -> Bool in
                if state.stops + state.ends >= state.starts { return true }
                state.idleWaiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }
}

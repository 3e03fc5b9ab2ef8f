import FoundationEssentials
package import GPSDLocation
import GPSDSystem

/// A ``LocationSource`` a test drives by hand: every event is delivered synchronously, on the test's thread,
/// by ``send(_:)``, to the newest session. It counts sessions opened and closed and held-fix requests, lets a
/// test await an opening or the moment no session is open, and can run a hook inside the next opening (another
/// thread acting at that instant) or make it fail.
package final class ScriptedSource: LocationSource {
    package enum HookTiming: Sendable { case beforeOpening, afterOpening }

    private struct State {
        var sessions: [Session] = []
        var closes = 0
        var hook: (timing: HookTiming, body: @Sendable () -> Void)?
        var closingHook: (@Sendable () -> Void)?
        var openingFailure: LocationError?
        var openWaiters = LevelWaiters()
        var idleWaiters: [CheckedContinuation<Void, Never>] = []

        /// Every session's close has run to its end (a session is marked closed first, then counted).
        var isIdle: Bool { closes == sessions.count && sessions.allSatisfy(\.isClosed) }
    }

    /// One session: its handler, which events reach until the session is closed.
    private final class Session: SourceSession {
        let source: ScriptedSource
        let handler: @Sendable ([SourceEvent]) -> Void
        private let closedFlag = Locked(false)
        let heldFixRequests = Locked(0)

        init(source: ScriptedSource, handler: @escaping @Sendable ([SourceEvent]) -> Void) {
            self.source = source
            self.handler = handler
        }

        var isClosed: Bool { closedFlag.withLock { $0 } }

        func requestHeldFix() { heldFixRequests.withLock { $0 += 1 } }

        func close() {
            guard closedFlag.withLock({ closed in defer { closed = true }; return !closed }) else { return }
            source.closed()
        }
    }

    private let state = Locked(State())

    package init() {}

    package func openSession(_ handler: @escaping @Sendable ([SourceEvent]) -> Void) throws(LocationError) -> any SourceSession {
        let (hook, failure) = state.withLock { state in
            defer { (state.hook, state.openingFailure) = (nil, nil) }
            return (state.hook, state.openingFailure)
        }
        if let hook, hook.timing == .beforeOpening { hook.body() }
        if let failure { throw failure }
        let (session, ready) = state.withLock { state in
            let session = Session(source: self, handler: handler)
            state.sessions.append(session)
            return (session, state.openWaiters.reached(state.sessions.count))
        }
        ready.forEach { $0.resume() }
        if let hook, hook.timing == .afterOpening { hook.body() }
        return session
    }

    private func closed() {
        state.withLock { state in
            defer { state.closingHook = nil }
            return state.closingHook
        }?()
        state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.closes += 1
            guard state.isIdle else { return [] }
            defer { state.idleWaiters = [] }
            return state.idleWaiters
        }.forEach { $0.resume() }
    }

    /// Runs `body` inside the next opening, once: before the session opens (a thread that overtakes the opening),
    /// or just after.
    package func onNextOpening(_ timing: HookTiming, _ body: @escaping @Sendable () -> Void) {
        state.withLock { $0.hook = (timing, body) }
    }

    /// Runs `body` inside the next close of a session, once: another thread acting while the manager closes it.
    package func onNextClosing(_ body: @escaping @Sendable () -> Void) {
        state.withLock { $0.closingHook = body }
    }

    /// Makes the next opening throw `error` (the system refused a thread, say).
    package func failNextOpening(with error: LocationError) {
        state.withLock { $0.openingFailure = error }
    }

    /// Whether the newest session is open.
    package var isRunning: Bool { state.withLock { $0.sessions.last.map { !$0.isClosed } ?? false } }
    /// Whether no session is open.
    package var isIdle: Bool { state.withLock { $0.isIdle } }
    package var openCount: Int { state.withLock { $0.sessions.count } }
    package var closeCount: Int { state.withLock { $0.closes } }
    /// How often the manager asked any session for gpsd's held fix (`?POLL;`).
    package var heldFixRequestCount: Int {
        state.withLock { $0.sessions }.reduce(0) { $0 + $1.heldFixRequests.withLock { $0 } }
    }

    /// How often the manager asked session `number` (from 1) for gpsd's held fix.
    package func heldFixRequests(inSession number: Int) -> Int {
        let sessions = state.withLock { $0.sessions }
        return sessions.indices.contains(number - 1) ? sessions[number - 1].heldFixRequests.withLock { $0 } : 0
    }

    /// Delivers `event` to the newest session, synchronously. Returns false if it is not open.
    @discardableResult
    package func send(_ event: SourceEvent) -> Bool {
        send([event])
    }

    /// Delivers `events` to the newest session in one call, as a read of several reports does. Returns false
    /// if it is not open.
    @discardableResult
    package func send(_ events: [SourceEvent]) -> Bool {
        guard let session = state.withLock({ $0.sessions.last }), !session.isClosed else { return false }
        session.handler(events)
        return true
    }

    /// Delivers `event` to session `number` (from 1), even one the manager has closed: a late event of an old
    /// session. Returns false if there is no such session.
    @discardableResult
    package func send(_ event: SourceEvent, toSession number: Int) -> Bool {
        guard let session = state.withLock({ $0.sessions.indices.contains(number - 1) ? $0.sessions[number - 1] : nil })
        else { return false }
        session.handler([event])
        return true
    }

    /// Delivers a fix report to the newest session.
    @discardableResult
    package func send(_ location: Location) -> Bool { send(.report(.fix(location))) }

    /// Returns once at least `count` sessions have been opened in all.
    package func waitForOpening(count: Int = 1) async {
        await state.wait(until: \.sessions.count, reaches: count, waiters: \.openWaiters)
    }

    /// Returns once no session is open.
    package func waitUntilIdle() async {
        await withCheckedContinuation { continuation in
            let idle = state.withLock { state -> Bool in
                if state.isIdle { return true }
                state.idleWaiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }
}

extension GPSDReport {
    /// A SKY with counts and no satellites listed, for tests of what the manager does with counts: of the
    /// receiver of ``Location/sample(second:metresPerSecond:accuracy:device:)`` unless `device` says otherwise.
    /// The manager passes its view on when its epoch ends (``noFix(second:device:)``, a fix of a later second).
    package static func sky(_ count: SatelliteCount, device: String? = "/dev/test") -> GPSDReport {
        .sky(SkyView(satellites: [], visible: count.visible, used: count.used, device: device), listed: true)
    }

    /// A TPV without a fix at `second` (the time of ``Location/sample(second:metresPerSecond:accuracy:device:)``):
    /// it begins that second's epoch, so it ends the sky epoch before.
    package static func noFix(second: Int, device: String? = "/dev/test") -> GPSDReport {
        .noFix(device: device, time: Date(timeIntervalSince1970: 1_748_779_200 + Double(second)))
    }
}

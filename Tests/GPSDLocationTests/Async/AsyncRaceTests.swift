import Foundation
import GPSDLocation
import GPSDTestSupport
import Testing

/// Two ways of ending one request, in each order and at the same time: the request resumes once, with the
/// outcome of whichever came first. A second resume of a `CheckedContinuation` would crash the test process, so
/// finishing at all is part of the evidence; the outcomes are counted as well.
@Suite("Async request races", .timeLimit(.minutes(1)))
struct AsyncRaceTests {
    /// How often each simultaneous race is run, each time on a fresh manager.
    private static let rounds = 300

    private let connectionLost = LocationError(.connectionLost, "connection to gpsd at localhost:2947 lost")
    private let fix = Location.sample(second: 1, accuracy: 5)

    /// A rig with one request registered (its timeout is sleeping on the manual clock).
    private func registered(timeout: Duration = .seconds(5)) async -> (AsyncRig, Task<AsyncOutcome, Never>) {
        let rig = AsyncRig()
        let request = rig.request(timeout: timeout, desiredAccuracy: 10)
        await rig.clock.waitForSleepers(1)
        return (rig, request)
    }

    /// Runs both at the same time on the global pool; `swap` changes which is enqueued first.
    private func simultaneously(
        swap: Bool, _ first: @escaping @Sendable () -> Void, _ second: @escaping @Sendable () -> Void
    ) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask(operation: swap ? second : first)
            group.addTask(operation: swap ? first : second)
        }
    }

    /// Advances `clock` past a deadline and, at the same time, runs `event` after `delay` yields. A timeout
    /// runs on its timer's task, a hop after the clock moved, so an event started together with the advance
    /// nearly always wins: the yields (a jitter, not a wait for anything) let the timer win some rounds too.
    private func timeout(on clock: ManualClock, racing event: @escaping @Sendable () -> Void, delay: Int) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { clock.advance(by: .seconds(5)) }
            group.addTask {
                for _ in 0..<delay { await Task.yield() }
                event()
            }
        }
    }

    private func isTimedOutWithoutBest(_ outcome: AsyncOutcome) -> Bool {
        outcome.locationError.map { $0.code == .timedOut && $0.bestLocation == nil } ?? false
    }

    // MARK: Fix vs timeout

    @Test func aFixBeforeTheTimeoutWins() async {
        let (rig, request) = await registered()
        rig.source.send(fix)
        #expect(rig.clock.sleeperCount == 0, "the fix cancelled the timeout")
        rig.clock.advance(by: .seconds(5))
        #expect(await request.value == .fix(fix))
        #expect(!rig.source.isRunning)
    }

    @Test func aTimeoutBeforeTheFixWins() async {
        let (rig, request) = await registered()
        rig.clock.advance(by: .seconds(5))
        #expect(isTimedOutWithoutBest(await request.value))
        await rig.source.waitUntilIdle()
        #expect(!rig.source.send(fix), "the watch stopped with the last request")
        #expect(rig.source.closeCount == 1)
    }

    @Test func aFixAndTheTimeoutAtOnceResumeOnce() async {
        var (fixes, timeouts) = (0, 0)
        for round in 0..<Self.rounds {
            let (rig, request) = await registered()
            let (source, clock, fix) = (rig.source, rig.clock, fix)
            await timeout(on: clock, racing: { source.send(fix) }, delay: round % 4)
            let outcome = await request.value
            if outcome == .fix(fix) {
                fixes += 1
            } else if isTimedOutWithoutBest(outcome) {
                timeouts += 1
            } else {
                Issue.record("round \(round): \(outcome)")
            }
            await rig.source.waitUntilIdle()
            #expect(!rig.source.isRunning)
            #expect(rig.clock.sleeperCount == 0)
        }
        #expect(fixes + timeouts == Self.rounds)
    }

    // MARK: Fix vs cancellation

    @Test func aFixBeforeTheCancellationWins() async {
        let (rig, request) = await registered()
        rig.source.send(fix)
        request.cancel()
        #expect(await request.value == .fix(fix))
    }

    @Test func aCancellationBeforeTheFixWins() async {
        let (rig, request) = await registered()
        request.cancel()
        // The request gives its watch back, then throws; the session is closed on a thread of its own, maybe
        // after the request has thrown.
        #expect(await request.value == .cancelled)
        await rig.source.waitUntilIdle()
        #expect(!rig.source.send(fix), "the watch stopped when the only request left")
    }

    @Test func aFixAndACancellationAtOnceResumeOnce() async {
        var (fixes, cancellations) = (0, 0)
        for round in 0..<Self.rounds {
            let (rig, request) = await registered()
            let (source, fix) = (rig.source, fix)
            await simultaneously(swap: round.isMultiple(of: 2), { request.cancel() }, { source.send(fix) })
            switch await request.value {
            case .fix(fix): fixes += 1
            case .cancelled: cancellations += 1
            case let other: Issue.record("round \(round): \(other)")
            }
            // Both paths release the watch: the fix's at once, the cancellation's on a thread of its own (a
            // cancellation handler must not block), which a wait for the idle source sees through.
            await rig.source.waitUntilIdle()
            #expect(!rig.source.isRunning)
            #expect(rig.clock.sleeperCount == 0)
        }
        #expect(fixes + cancellations == Self.rounds)
    }

    // MARK: Failure vs cancellation

    @Test func aFailureBeforeTheCancellationWins() async {
        let (rig, request) = await registered()
        rig.source.send(.failed(connectionLost))
        request.cancel()
        #expect(await request.value == .error(connectionLost))
    }

    @Test func aCancellationBeforeTheFailureWinsAndIsNoLocationError() async {
        let (rig, request) = await registered()
        request.cancel()
        rig.source.send(.failed(connectionLost))
        #expect(await request.value == .cancelled)
    }

    @Test func aFailureAndACancellationAtOnceResumeOnce() async {
        var (failures, cancellations) = (0, 0)
        for round in 0..<Self.rounds {
            let (rig, request) = await registered()
            let (source, failure) = (rig.source, SourceEvent.failed(connectionLost))
            await simultaneously(swap: round.isMultiple(of: 2), { request.cancel() }, { source.send(failure) })
            switch await request.value {
            case .error(connectionLost): failures += 1
            case .cancelled: cancellations += 1
            case let other: Issue.record("round \(round): \(other)")
            }
            // The session was closed exactly once: for the cancellation, or after the failure ended it.
            await rig.source.waitUntilIdle()
            #expect(rig.source.closeCount == 1)
        }
        #expect(failures + cancellations == Self.rounds)
    }

    // MARK: Timeout vs cancellation

    @Test func aCancellationBeforeTheTimeoutWins() async {
        let (rig, request) = await registered()
        request.cancel()
        #expect(rig.clock.sleeperCount == 0, "the cancellation cancelled the timeout")
        rig.clock.advance(by: .seconds(5))
        #expect(await request.value == .cancelled)
    }

    @Test func aTimeoutBeforeTheCancellationWins() async {
        let (rig, request) = await registered()
        rig.clock.advance(by: .seconds(5))
        let outcome = await request.value
        request.cancel()
        #expect(isTimedOutWithoutBest(outcome))
    }

    @Test func aTimeoutAndACancellationAtOnceResumeOnce() async {
        var (timeouts, cancellations) = (0, 0)
        for round in 0..<Self.rounds {
            let (rig, request) = await registered()
            await timeout(on: rig.clock, racing: { request.cancel() }, delay: round % 4)
            let outcome = await request.value
            if outcome == .cancelled {
                cancellations += 1
            } else if isTimedOutWithoutBest(outcome) {
                timeouts += 1
            } else {
                Issue.record("round \(round): \(outcome)")
            }
            await rig.source.waitUntilIdle()
            #expect(!rig.source.isRunning)
        }
        #expect(timeouts + cancellations == Self.rounds)
    }

    // MARK: stop() vs fix

    @Test func stopBeforeTheFixWins() async {
        let (rig, request) = await registered()
        await rig.gps.stop()
        #expect(!rig.source.send(fix))
        #expect(await request.value == .cancelled)
    }

    @Test func aFixBeforeStopWins() async {
        let (rig, request) = await registered()
        rig.source.send(fix)
        await rig.gps.stop()
        #expect(await request.value == .fix(fix))
    }

    @Test func stopAndAFixAtOnceResumeEveryWaiterOnceAndAlike() async {
        var (fixes, cancellations) = (0, 0)
        for round in 0..<Self.rounds / 3 {
            let rig = AsyncRig()
            let requests = (0..<20).map { _ in rig.request(timeout: .seconds(5)) }
            await rig.clock.waitForSleepers(20)
            let (gps, source, fix) = (rig.gps, rig.source, fix)
            await simultaneously(swap: round.isMultiple(of: 2), { gps.stopBlocking() }, { source.send(fix) })
            var outcomes: [AsyncOutcome] = []
            for request in requests { outcomes.append(await request.value) }
            // The fix and stop() each take every waiter in one step: all get the same outcome.
            #expect(Set(outcomes.map(\.description)).count == 1, "round \(round): \(outcomes)")
            for outcome in outcomes {
                switch outcome {
                case .fix(fix): fixes += 1
                case .cancelled: cancellations += 1
                case let other: Issue.record("round \(round): \(other)")
                }
            }
            #expect(!rig.source.isRunning)
        }
        #expect(fixes + cancellations == Self.rounds / 3 * 20)
    }

    // MARK: Events while a request registers

    // The hook runs inside the source's `start`, that is inside the request's registration, after the waiter
    // is registered and before its timeout is attached: the window where exactly-once is hardest to keep.

    @Test func aFixWhileTheRequestRegistersServesItAndItsTimeoutNeverRuns() async {
        let rig = AsyncRig()
        let (source, fix) = (rig.source, fix)
        rig.source.onNextOpening(.afterOpening) { source.send(fix) }
        let request = rig.request(timeout: .seconds(5))
        #expect(await request.value == .fix(fix))
        #expect(rig.clock.sleeperCount == 0, "the orphaned timeout was cancelled")
        #expect(!rig.source.isRunning)
        #expect(rig.source.closeCount == 1)
    }

    @Test func stopWhileTheRequestRegistersCancelsIt() async {
        let rig = AsyncRig()
        let gps = rig.gps
        rig.source.onNextOpening(.afterOpening) { gps.stopBlocking() }
        let request = rig.request(timeout: .seconds(5))
        #expect(await request.value == .cancelled)
        #expect(rig.clock.sleeperCount == 0)
        #expect(!rig.source.isRunning)
    }

    @Test func aFailureWhileTheRequestRegistersIsThrown() async {
        let rig = AsyncRig()
        let (source, failure) = (rig.source, SourceEvent.failed(connectionLost))
        rig.source.onNextOpening(.afterOpening) { source.send(failure) }
        let request = rig.request(timeout: .seconds(5))
        #expect(await request.value == .error(connectionLost))
        #expect(rig.clock.sleeperCount == 0)
        // The manager is idle: the next request starts a new watch and releases it.
        let next = rig.request()
        await rig.clock.waitForSleepers(1)
        #expect(rig.source.openCount == 2)
        rig.source.send(fix)
        #expect(await next.value == .fix(fix))
        #expect(!rig.source.isRunning)
    }

    /// A release on one thread whose `stop` of the source overtakes the `start` another thread decided just
    /// before: the manager must not end up believing the source stopped while it runs.
    @Test func aStopThatOvertakesTheStartOfTheWatchLeavesNothingRunning() async {
        let rig = AsyncRig()
        let gps = rig.gps
        rig.source.onNextOpening(.beforeOpening) { gps.stopBlocking() }
        let request = rig.request(timeout: .seconds(5))
        #expect(await request.value == .cancelled)
        #expect(
            !rig.source.isRunning,
            "LocationManager.perform runs .startSource/.stopSource after unlocking, so this stop ran first")
        #expect(rig.source.openCount == rig.source.closeCount)
    }
}

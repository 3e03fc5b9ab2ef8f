import Foundation
@testable import GPSDLocation
import GPSDSystem
import GPSDTestSupport
import Testing

/// The debug-build check that a real-time handler does not block a live source: it times the handler's own work,
/// the larger of its CPU time and its wall time less the time the process was not running. A handler that sleeps
/// or spins past ``RealTimeSubscription/handlerTimeLimit`` stops the process; a correct one in a process stopped
/// and continued meanwhile does not. Each runs in a child process of its own (an exit test), with a scripted
/// live source whose fixes are sent on a thread of the test's own.
@Suite("Real-time updates: the check times the handler's own work", .timeLimit(.minutes(1)))
struct RealTimeCheckTests {
    /// How a failed Swift precondition ends a process.
    private static let trap = {
        #if arch(arm64)
        SIGTRAP
        #else
        SIGILL
        #endif
    }()

    /// Sends `count` fixes from a scripted live source to a timed real-time `handler`, on a thread of their own.
    static func sendTimed(_ count: Int, to handler: @escaping @Sendable (Location) -> Void) async {
        let source = ScriptedSource()
        let manager = LocationManager(source: source, clock: ManualManagerClock())
        let subscription = manager.realTimeUpdates(.continuous(), timingCalls: true, handler)
        await onThread {
            for second in 1...count { source.send(Location.sample(second: second)) }
        }
        withExtendedLifetime(subscription) {}
    }

    /// Keeps the calling thread busy for `duration` of wall time.
    static func work(for duration: Duration) {
        let end = ContinuousClock.now + duration
        while ContinuousClock.now < end {}
    }

    private static func message(_ result: ExitTest.Result?) -> String {
        String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    }

    @Test("a handler that sleeps 200 ms stops a debug build, the message naming the rule and the times")
    func aHandlerThatSleepsPastTheLimitStopsTheProcess() async {
        let result = await #expect(processExitsWith: .signal(Self.trap), observing: [\.standardErrorContent]) {
            await RealTimeCheckTests.sendTimed(1) { _ in Syscall.sleep(for: .milliseconds(200)) }
        }
        let message = Self.message(result)
        #expect(message.contains("must not block"), "\(message)")
        #expect(message.contains("RealTimeSubscription.handlerTimeLimit"), "\(message)")
        #expect(message.contains("of its own (CPU time") && message.contains("wall time"), "\(message)")
    }

    @Test("a handler that spins 200 ms of CPU stops a debug build")
    func aHandlerThatSpinsPastTheLimitStopsTheProcess() async {
        let result = await #expect(processExitsWith: .signal(Self.trap), observing: [\.standardErrorContent]) {
            await RealTimeCheckTests.sendTimed(1) { _ in
                let start = Syscall.threadCPUTime()
                while Syscall.threadCPUTime() - start < .milliseconds(200) {}
            }
        }
        let message = Self.message(result)
        #expect(message.contains("must not block"), "\(message)")
        #expect(message.contains("RealTimeSubscription.handlerTimeLimit"), "\(message)")
    }

    /// The stop lands inside the first call, deterministically: the handler wakes a shell that was started before
    /// any fix and waits on a pipe; the shell stops this process for a second and continues it. The handler waits
    /// in 1 ms steps until it sees a gap of over half a second (it was stopped), then works 20 ms. The child's
    /// status says what went wrong: SIGILL, the check stopped it; 3, it never saw the stop (it waits 10 s at most),
    /// so the test cannot pass without one; 4, a later fix was not handled; 5, the shell did not start.
    @Test("a correct handler whose process is SIGSTOPped for a second and continued keeps running")
    func aCorrectHandlerInAProcessStoppedForASecondKeepsRunning() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let script = "read x && kill -STOP \(getpid()) && sleep 1 && kill -CONT \(getpid())"
            guard let helper = Helper(script) else { exit(5) }
            let stopSeen = Locked<Duration?>(nil)
            let calls = Locked(0)
            await RealTimeCheckTests.sendTimed(3) { _ in
                guard calls.withLock({ $0 += 1; return $0 }) == 1 else { return RealTimeCheckTests.work(for: .milliseconds(20)) }
                // The clock is read before the wake: the stop may land at once, before the next line.
                var last = ContinuousClock.now
                let deadline = last + .seconds(10)
                helper.wake()
                while last < deadline {
                    Syscall.sleep(for: .milliseconds(1))
                    let now = ContinuousClock.now
                    if last.duration(to: now) > .milliseconds(500) {
                        stopSeen.withLock { $0 = last.duration(to: now) }
                        break
                    }
                    last = now
                }
                RealTimeCheckTests.work(for: .milliseconds(20))
            }
            guard let gap = stopSeen.withLock({ $0 }) else {
                FileHandle.standardError.write(Data("the process was never stopped\n".utf8))
                exit(3)
            }
            FileHandle.standardError.write(Data("stopped for \(gap); calls: \(calls.withLock { $0 })\n".utf8))
            guard calls.withLock({ $0 }) == 3 else { exit(4) }
            helper.wait()
        }
        let message = Self.message(result)
        #expect(message.contains("stopped for"), "\(message)")
    }

    @Test("a call's own time: its CPU time, or its wall time less the time not running, whichever is larger")
    func aCallsOwnTimeIsItsCPUTimeOrItsWallTimeLessTheTimeNotRunning() {
        let sleeping = RealTimeConsumer.CallTime(cpu: .milliseconds(1), wall: .milliseconds(200))
        #expect(sleeping.own(notRunning: .zero) == .milliseconds(200))
        #expect(sleeping.own(notRunning: .milliseconds(150)) == .milliseconds(50))
        #expect(sleeping.own(notRunning: .seconds(5)) == .milliseconds(1), "never below the CPU time")
        let spinning = RealTimeConsumer.CallTime(cpu: .milliseconds(200), wall: .milliseconds(1_200))
        #expect(spinning.own(notRunning: .seconds(1)) == .milliseconds(200))
        #expect(spinning.own(notRunning: .milliseconds(1_100)) == .milliseconds(200), "a stop never hides spinning")
    }
}

/// The witness's arithmetic, driven by instants of the test's own.
@Suite("Real-time updates: the check's stop witness, as a value")
struct RealTimeCheckWitnessTests {
    private let t0 = ContinuousClock.now
    private func at(_ milliseconds: Int) -> ContinuousClock.Instant { t0 + .milliseconds(milliseconds) }

    @Test("the witness ticks only while a call is in progress")
    func itTicksOnlyWhileACallIsInProgress() {
        var state = StopWitnessState(tick: .milliseconds(5))
        #expect(!state.isTicking)
        let mark = state.callStarted(at: at(0))
        #expect(state.isTicking)
        #expect(state.callEnded(since: mark) == .zero)
        #expect(!state.isTicking)
    }

    @Test("wakes up to three ticks late count nothing")
    func wakesUpToThreeTicksLateCountNothing() {
        var state = StopWitnessState(tick: .milliseconds(5))
        let mark = state.callStarted(at: at(0))
        for wake in [5, 10, 17, 32] { state.witnessWoke(at: at(wake)) }   // gaps of 5, 5, 7 and 15 ms
        #expect(state.callEnded(since: mark) == .zero)
    }

    @Test("a longer gap counts all but one tick")
    func aLongerGapCountsAllButOneTick() {
        var state = StopWitnessState(tick: .milliseconds(5))
        let mark = state.callStarted(at: at(0))
        state.witnessWoke(at: at(5))
        state.witnessWoke(at: at(1_010))   // stopped for about a second
        state.witnessWoke(at: at(1_026))   // 16 ms: a late wake past the limit counts too
        #expect(state.callEnded(since: mark) == .milliseconds(1_000 + 11))
    }

    @Test("a stop before the first wake counts from the call's start, not from the idle witness's last wake")
    func aStopBeforeTheFirstWakeCountsFromTheCallsStart() {
        var state = StopWitnessState(tick: .milliseconds(5))
        _ = state.callStarted(at: at(0))
        _ = state.callEnded(since: .zero)
        state.witnessWoke(at: at(5))          // idles: no call in progress
        let mark = state.callStarted(at: at(500))   // the gap while it idled is not counted
        state.witnessWoke(at: at(1_505))
        #expect(state.callEnded(since: mark) == .milliseconds(1_000))
    }

    @Test("each call gets what was counted during it")
    func eachCallGetsWhatWasCountedDuringIt() {
        var state = StopWitnessState(tick: .milliseconds(5))
        let first = state.callStarted(at: at(0))
        state.witnessWoke(at: at(305))         // 300 ms not running, during the first call only
        let second = state.callStarted(at: at(306))
        state.witnessWoke(at: at(310))
        state.witnessWoke(at: at(515))         // 200 ms more, during both
        #expect(state.callEnded(since: first) == .milliseconds(500))
        #expect(state.callEnded(since: second) == .milliseconds(200))
    }

    @Test("a call that ends before the witness woke waits for a tick begun after its end")
    func aCallEndingBeforeTheWitnessWokeWaitsForATickBegunAfterIt() {
        // Continued from a stop, the call's thread ran first: it ended at 1 020 ms, before the witness woke.
        var state = StopWitnessState(tick: .milliseconds(5))
        let mark = state.callStarted(at: at(0))
        state.witnessWoke(at: at(5))
        let end = at(1_020)
        #expect(!state.hasSeenEverythingBefore(end))
        state.witnessWoke(at: at(1_021))   // the stop's gap, in a tick begun before the end
        #expect(!state.hasSeenEverythingBefore(end))
        state.witnessWoke(at: at(1_026))   // a tick begun after the end
        #expect(state.hasSeenEverythingBefore(end))
        #expect(state.callEnded(since: mark) == .milliseconds(1_011))
    }
}

/// `/bin/sh -c script` with its standard input the read end of a pipe, started at once: ``wake()`` writes a line
/// to the pipe.
private struct Helper: Sendable {
    let pid: pid_t
    let input: Int32

    init?(_ script: String) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return nil }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, ends[0], 0)
        posix_spawn_file_actions_addclose(&actions, ends[0])
        posix_spawn_file_actions_addclose(&actions, ends[1])
        let words: [String] = ["/bin/sh", "-c", script]
        let arguments: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
        defer { arguments.forEach { free($0) } }
        var pid = pid_t()
        guard posix_spawn(&pid, "/bin/sh", &actions, nil, arguments, environ) == 0 else { return nil }
        close(ends[0])
        self.pid = pid
        input = ends[1]
    }

    func wake() {
        _ = write(input, "\n", 1)
    }

    /// Reaps the shell.
    func wait() {
        var status: Int32 = 0
        _ = waitpid(pid, &status, 0)
    }
}

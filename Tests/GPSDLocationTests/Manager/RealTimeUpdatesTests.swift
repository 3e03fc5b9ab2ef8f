import Foundation
import GPSDLocation
import GPSDSystem
import GPSDTestSupport
import Testing

/// `LocationManager.realTimeUpdates`: the handler called synchronously on the thread that hands the fix over
/// (here the thread calling the scripted source's `send`), its filters, every way it ends, and cancelling from
/// every thread that can.
@Suite("LocationManager: real-time updates", .timeLimit(.minutes(1)))
struct RealTimeUpdatesTests: ManagerTesting {
    let rig = ManagerRig()
    private let recorder = RealTimeRecorder()
    private let lost = LocationError(.connectionLost, "connection to gpsd lost: gpsd closed the connection")

    // MARK: Fixes

    @Test func everyFixInOrderWithTheFiltersApplied() {
        let subscription = manager.untimedRealTimeUpdates(
            desiredAccuracy: 10, distanceFilter: 15, onEnd: recorder.onEnd(), recorder.handler())
        let first = Location.sample(second: 1)
        let inaccurate = Location.sample(second: 2, accuracy: 20)   // rejected by the accuracy
        let third = Location.sample(second: 3)                       // 20 m from the first
        let fourth = Location.sample(second: 4)                      // 10 m from the third: held back
        let fifth = Location.sample(second: 5)                       // 20 m from the third
        for fix in [first, inaccurate, third, fourth, fifth] { #expect(source.send(fix)) }
        #expect(recorder.fixes == [first, third, fifth])
        #expect(recorder.ends.isEmpty)
        withExtendedLifetime(subscription) {}
    }

    @Test func eachFixIsHandledBeforeSendReturnsOnTheSendingThread() async {
        let subscription = manager.untimedRealTimeUpdates(recorder.handler())
        let sent = fixes(1...3)
        // The session's thread is the thread calling `send`: one of the test's own, not of Swift's pool.
        let (sender, handledInside) = await onThread { [source, recorder] in
            (SystemThread.currentID, sent.map { fix in
                source.send(fix)
                return recorder.fixes.last == fix
            })
        }
        #expect(handledInside == [true, true, true], "each fix was handled inside its send")
        #expect(recorder.fixes == sent)
        #expect(recorder.threads == [sender, sender, sender])
        withExtendedLifetime(subscription) {}
    }

    @Test func repeatedReportsOfAnEpochAreHandledAsReportedOrOncePerEpoch() {
        let asReported = RealTimeRecorder()
        let reporting = manager.untimedRealTimeUpdates(asReported.handler())
        let epochs = manager.untimedRealTimeUpdates(delivery: .oncePerEpoch, onEnd: recorder.onEnd(), recorder.handler())
        let complete = Location.sample(second: 1)
        var bare = complete
        bare.altitude = nil
        let next = Location.sample(second: 2)
        for fix in [bare, complete, next] { source.send(fix) }
        #expect(asReported.fixes == [bare, complete, next])
        #expect(recorder.fixes == [complete], "the first epoch once, complete, when the next begins")
        epochs.cancel()
        #expect(recorder.fixes == [complete, next], "the epoch it held, passed as it is cancelled")
        #expect(recorder.ends == [nil])
        withExtendedLifetime(reporting) {}
    }

    // MARK: Cancelling

    @Test func cancelStopsTheCallsAndTheWatchAndIsIdempotent() {
        let subscription = manager.untimedRealTimeUpdates(onEnd: recorder.onEnd(), recorder.handler())
        source.send(Location.sample(second: 1))
        subscription.cancel()
        #expect(recorder.ends == [nil], "onEnd once, as it is cancelled")
        #expect(source.isIdle, "nothing else wants fixes: the watch stopped")
        subscription.cancel()
        #expect(source.closeCount == 1)
        #expect(!source.send(Location.sample(second: 2)))
        #expect(recorder.fixes == [Location.sample(second: 1)])
        #expect(recorder.ends == [nil], "a second cancel calls nothing")
    }

    @Test func cancelReturnsOnlyOnceTheCallUnderWayOnAnotherThreadHasReturned() async {
        let gate = Locked(false)
        let log = Locked<[String]>([])
        // Untimed: the handler waits for the test, which a debug build's check would take for blocking.
        let subscription = manager.realTimeUpdates(.continuous(), timingCalls: false, onEnd: recorder.onEnd()) { _ in
            log.withLock { $0.append("handler entered") }
            gate.withLock(when: { $0 }) { _ in }
            log.withLock { $0.append("handler returns") }
        }
        let source = source
        let sending = Task { await onThread { source.send(Location.sample(second: 1)) } }
        await onThread { log.withLock(when: { $0.contains("handler entered") }) { _ in } }
        // The handler is let go once the cancel waits for it, or, were it not to wait, once it has returned.
        let (progress, step) = AsyncStream.makeStream(of: Void.self)
        let cancelling = Task {
            await onThread {
                subscription.cancel()
                log.withLock { $0.append("cancel returned") }
            }
            step.yield()
        }
        Task {
            await onThread { subscription.waitForACancelToWait() }
            step.yield()
        }
        for await _ in progress { break }
        gate.withLock { $0 = true }
        await cancelling.value
        #expect(await sending.value)
        #expect(log.withLock { $0 } == ["handler entered", "handler returns", "cancel returned"])
        #expect(recorder.ends == [nil])
        #expect(source.isIdle)
    }

    @Test func cancelInsideTheHandlerReturnsAndNothingFollowsButTheEnd() {
        let box = Locked<RealTimeSubscription?>(nil)
        let subscription = manager.untimedRealTimeUpdates(onEnd: recorder.onEnd(), recorder.handler { fix in
            guard fix == Location.sample(second: 2) else { return }
            box.withLock { $0 }?.cancel()
        })
        box.withLock { $0 = subscription }
        source.send(Location.sample(second: 1))
        source.send(Location.sample(second: 2))   // cancels, and returns
        #expect(recorder.ends == [nil], "onEnd after the handler returned, on the same thread")
        #expect(Set(recorder.threads).count == 1)
        #expect(!source.send(Location.sample(second: 3)), "the watch stopped")
        #expect(recorder.fixes == fixes(1...2))
        box.withLock { $0 = nil }
    }

    @Test func cancelInsideAnotherSubscriptionsHandlerDoesNotWaitForItsOwnThread() {
        // All are notified by one thread, in an order of the manager's choosing. Those after the one whose handler
        // cancels them still have their fix on that thread, behind the call that cancels: waiting for it would
        // never end. (With seven, one at least comes after it seven times in eight.) Either way each gets the fix
        // decided before its cancel, then its end.
        let recorders = (1...7).map { _ in RealTimeRecorder() }
        let cancelled = recorders.map { manager.untimedRealTimeUpdates(onEnd: $0.onEnd(), $0.handler()) }
        let cancelling = manager.untimedRealTimeUpdates(recorder.handler { _ in
            for subscription in cancelled { subscription.cancel() }
        })
        source.send(Location.sample(second: 1))
        source.send(Location.sample(second: 2))
        for cancelled in recorders {
            #expect(cancelled.fixes == [Location.sample(second: 1)])
            #expect(cancelled.ends == [nil])
        }
        #expect(recorder.fixes == fixes(1...2))
        withExtendedLifetime(cancelling) {}
    }

    @Test func aCancelRacingFixesOnAnotherThreadLeavesNoCallAfterIt() async {
        for round in 1...50 {
            let rig = ManagerRig()
            let recorder = RealTimeRecorder()
            let (cancelReturned, callsAfter) = (Locked(false), Locked(0))
            let subscription = rig.manager.untimedRealTimeUpdates(onEnd: recorder.onEnd(), recorder.handler { _ in
                if cancelReturned.withLock({ $0 }) { callsAfter.withLock { $0 += 1 } }
            })
            let sent = fixes(1...200)
            async let sending: Void = onThread {
                for fix in sent where !rig.source.send(fix) { break }
            }
            async let cancelling: Void = onThread {
                subscription.cancel()
                cancelReturned.withLock { $0 = true }
            }
            _ = await (sending, cancelling)
            #expect(callsAfter.withLock { $0 } == 0, "round \(round)")
            #expect(recorder.ends == [nil], "round \(round)")
            #expect(recorder.fixes == Array(sent.prefix(recorder.fixes.count)), "round \(round): in order, none skipped")
        }
    }

    @Test func releasingTheSubscriptionCancelsIt() {
        do {
            let subscription = manager.untimedRealTimeUpdates(onEnd: recorder.onEnd(), recorder.handler())
            source.send(Location.sample(second: 1))
            withExtendedLifetime(subscription) {}
        }
        #expect(recorder.ends == [nil])
        #expect(source.isIdle)
        #expect(recorder.fixes == [Location.sample(second: 1)])
    }

    // MARK: Ends

    @Test func aFatalFailureEndsItOnceWithTheError() {
        let subscription = manager.untimedRealTimeUpdates(onEnd: recorder.onEnd(), recorder.handler())
        source.send(Location.sample(second: 1))
        source.send(.failed(lost))   // the rig does not reconnect
        #expect(recorder.ends == [lost])
        subscription.cancel()
        #expect(recorder.ends == [lost], "cancelled after its end: nothing more")
        #expect(recorder.fixes == [Location.sample(second: 1)])
    }

    @Test func theEndOfARecordingEndsItWithoutAnError() {
        let subscription = manager.untimedRealTimeUpdates(delivery: .oncePerEpoch, onEnd: recorder.onEnd(), recorder.handler())
        source.send(Location.sample(second: 1))
        source.send(.finished)
        #expect(recorder.fixes == [Location.sample(second: 1)], "the epoch it held, before the end")
        #expect(recorder.ends == [nil])
        withExtendedLifetime(subscription) {}
    }

    @Test func aFirstConnectionRefusedEndsItBeforeItIsReturned() {
        let refused = LocationError(.gpsdUnavailable, "cannot connect to gpsd: connect: Connection refused")
        source.failNextOpening(with: refused)
        let subscription = manager.untimedRealTimeUpdates(onEnd: recorder.onEnd(), recorder.handler())
        #expect(recorder.ends == [refused])
        subscription.cancel()
        #expect(recorder.ends == [refused])
    }

    @Test func aLostConnectionIsRetriedAndTheSubscriptionGoesOn() {
        let rig = ManagerRig(reconnect: ReconnectPolicy(jitter: 0))
        let subscription = rig.manager.untimedRealTimeUpdates(onEnd: recorder.onEnd(), recorder.handler())
        rig.source.send(.connected)
        rig.source.send(Location.sample(second: 1))
        rig.source.send(.failed(lost))
        rig.clock.advance(by: .milliseconds(250))
        #expect(rig.source.openCount == 2)
        rig.source.send(.connected)
        rig.source.send(Location.sample(second: 2))
        #expect(recorder.fixes == fixes(1...2))
        #expect(recorder.ends.isEmpty)
        withExtendedLifetime(subscription) {}
    }

    @Test func stoppingTheDelegateOrTheAsyncBridgeLeavesItRunning() async {
        let subscription = manager.untimedRealTimeUpdates(onEnd: recorder.onEnd(), recorder.handler())
        manager.startUpdatingLocation()
        manager.stopUpdatingLocation()
        await AsyncLocationManager(manager: manager).stop()
        #expect(source.send(Location.sample(second: 1)))
        #expect(recorder.fixes == [Location.sample(second: 1)])
        #expect(recorder.ends.isEmpty)
        withExtendedLifetime(subscription) {}
    }
}

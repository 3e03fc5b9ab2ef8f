import Foundation
import GPSDLocation
import GPSDTestSupport
import Testing

/// `AsyncLocationManager.requestLocation`: each way a request ends, `maximumAge`, `desiredAccuracy`, and the
/// one shared watch. Every event is driven by hand (a `ScriptedSource`, a `ManualManagerClock` for the manager,
/// a `ManualClock` for timeouts); a test waits only for events it can observe.
@Suite("Async requests", .timeLimit(.minutes(1)))
struct AsyncRequestTests {
    private let connectionLost = LocationError(.connectionLost, "connection to gpsd at localhost:2947 lost")

    // MARK: How a request ends

    @Test func aFixResolvesTheRequestAndStopsTheWatch() async {
        let rig = AsyncRig()
        let request = rig.request(timeout: .seconds(10))
        await rig.clock.waitForSleepers(1)
        #expect(rig.source.isRunning)
        #expect(rig.source.openCount == 1)

        let fix = Location.sample(second: 1)
        #expect(rig.source.send(fix))

        #expect(await request.value == .fix(fix))
        #expect(!rig.source.isRunning)
        #expect(rig.source.closeCount == 1)
        #expect(rig.clock.sleeperCount == 0, "the timeout's sleep is cancelled with the request")
    }

    @Test func aFailureOfTheManagerIsThrown() async {
        let rig = AsyncRig()
        let request = rig.request()
        await rig.clock.waitForSleepers(1)

        rig.source.send(.failed(connectionLost))

        #expect(await request.value == .error(connectionLost))
        #expect(rig.clock.sleeperCount == 0)
        #expect(rig.source.closeCount == 1, "the manager closed the failed session")
    }

    @Test func theEndOfARecordingFailsWithLocationUnknownAndTheBestFix() async throws {
        let rig = AsyncRig()
        let request = rig.request(desiredAccuracy: 10)
        await rig.clock.waitForSleepers(1)
        let rough = Location.sample(second: 1, accuracy: 30)
        rig.source.send(rough)

        rig.source.send(.finished)

        let error = try #require(await request.value.locationError)
        #expect(error.code == .locationUnknown)
        #expect(error.bestLocation == rough)
    }

    @Test func theTimeoutThrowsTimedOutWithNoBestWhenNothingArrived() async throws {
        let rig = AsyncRig()
        let request = rig.request(timeout: .seconds(5))
        await rig.clock.waitForSleepers(1)

        rig.clock.advance(by: .seconds(4))
        #expect(rig.clock.sleeperCount == 1, "not yet due")
        rig.clock.advance(by: .seconds(1))

        let error = try #require(await request.value.locationError)
        #expect(error.code == .timedOut)
        #expect(error.bestLocation == nil)
        await rig.source.waitUntilIdle()
        #expect(!rig.source.isRunning)
        #expect(rig.source.closeCount == 1)
    }

    @Test func cancellationThrowsCancellationErrorAtOnce() async {
        let rig = AsyncRig()
        let request = rig.request(timeout: .seconds(60))
        await rig.clock.waitForSleepers(1)

        request.cancel()
        // The request ends on a thread of its own (a cancellation handler must not block), having first given its
        // watch and its timeout back; the session is closed on a thread of its own, maybe after the request ended.
        #expect(await request.value == .cancelled)
        await rig.source.waitUntilIdle()
        #expect(!rig.source.isRunning)
        #expect(rig.clock.sleeperCount == 0)
        // A failure afterwards is not reported to the cancelled request.
        #expect(!rig.source.send(.failed(connectionLost)))
    }

    @Test func aRequestInAnAlreadyCancelledTaskThrowsWithoutStartingTheWatch() async {
        let rig = AsyncRig()
        let (gps, clock) = (rig.gps, rig.clock)
        let request = Task { () -> AsyncOutcome in
            withUnsafeCurrentTask { $0?.cancel() }
            return await AsyncOutcome.of { try await gps.requestLocation(timeout: .seconds(5), clock: clock) }
        }
        #expect(await request.value == .cancelled)
        #expect(rig.source.openCount == 0)
        #expect(rig.clock.sleeperCount == 0)
    }

    @Test func aRequestCancelledBeforeItRegistersThrowsCancellationErrorAndHoldsNothing() async {
        let rig = AsyncRig()
        // A stream holds the watch throughout, so the requests neither start nor stop it.
        let updates = rig.gps.updates()
        for _ in 0..<200 {
            let request = rig.request(timeout: .seconds(5))
            request.cancel()
            #expect(await request.value == .cancelled)
        }
        #expect(rig.clock.sleeperCount == 0)

        await rig.gps.stop()
        #expect(!rig.source.isRunning, "no cancelled request still holds the watch")
        #expect(rig.source.openCount == 1)
        #expect(rig.source.closeCount == 1)
        withExtendedLifetime(updates) {}
    }

    @Test func stopCancelsEveryPendingRequestAndStopsTheWatch() async {
        let rig = AsyncRig()
        let requests = (0..<3).map { _ in rig.request(timeout: .seconds(60)) }
        await rig.clock.waitForSleepers(3)

        await rig.gps.stop()

        #expect(!rig.source.isRunning)
        #expect(rig.source.closeCount == 1)
        for request in requests { #expect(await request.value == .cancelled) }
        #expect(rig.clock.sleeperCount == 0)
        // The stop is final: a request afterwards ends as those did, and starts nothing.
        #expect(await rig.request().value == .cancelled)
        #expect(rig.source.openCount == 1)
        // The manager underneath is usable again, through a new AsyncLocationManager.
        let next = rig.renewed().request()
        await rig.source.waitForOpening(count: 2)
        let fix = Location.sample(second: 1)
        rig.source.send(fix)
        #expect(await next.value == .fix(fix))
    }

    // MARK: The shared watch

    @Test func theWatchStopsWhenTheLastWaiterLeaves() async throws {
        let rig = AsyncRig()
        let cancelled = rig.request(timeout: .seconds(60))
        let timingOut = rig.request(timeout: .seconds(5))
        let served = rig.request(timeout: .seconds(60))
        await rig.clock.waitForSleepers(3)
        #expect(rig.source.openCount == 1)

        cancelled.cancel()
        #expect(await cancelled.value == .cancelled)
        #expect(rig.source.isRunning, "two requests still wait")

        rig.clock.advance(by: .seconds(5))
        #expect(try #require(await timingOut.value.locationError).code == .timedOut)
        #expect(rig.source.isRunning, "one request still waits")
        #expect(rig.source.closeCount == 0)

        let fix = Location.sample(second: 1)
        rig.source.send(fix)
        #expect(await served.value == .fix(fix))
        #expect(!rig.source.isRunning)
        #expect(rig.source.openCount == 1)
        #expect(rig.source.closeCount == 1)
    }

    @Test func aThousandCallersShareOneWatchAndOneFix() async {
        let rig = AsyncRig()
        let requests = (0..<1_000).map { _ in rig.request(timeout: .seconds(60)) }
        await rig.clock.waitForSleepers(1_000)
        #expect(rig.source.openCount == 1)

        let fix = Location.sample(second: 7)
        #expect(rig.source.send(fix))

        var served = 0
        for request in requests where await request.value == .fix(fix) { served += 1 }
        #expect(served == 1_000)
        #expect(rig.source.openCount == 1)
        #expect(rig.source.closeCount == 1)
        #expect(!rig.source.isRunning)
        #expect(rig.clock.sleeperCount == 0)
    }

    @Test func cancellingHalfOfAThousandCallersLeavesTheOtherHalfServed() async {
        let rig = AsyncRig()
        let requests = (0..<1_000).map { _ in rig.request(timeout: .seconds(60)) }
        await rig.clock.waitForSleepers(1_000)

        for (index, request) in requests.enumerated() where index.isMultiple(of: 2) { request.cancel() }
        #expect(rig.clock.sleeperCount == 500)
        #expect(rig.source.isRunning)
        #expect(rig.source.closeCount == 0)

        let fix = Location.sample(second: 7)
        #expect(rig.source.send(fix))

        var (served, cancelled, other) = (0, 0, 0)
        for (index, request) in requests.enumerated() {
            switch await request.value {
            case .fix(fix) where !index.isMultiple(of: 2): served += 1
            case .cancelled where index.isMultiple(of: 2): cancelled += 1
            default: other += 1
            }
        }
        #expect(served == 500)
        #expect(cancelled == 500)
        #expect(other == 0)
        #expect(rig.source.openCount == 1)
        #expect(!rig.source.isRunning)
    }

    // MARK: desiredAccuracy

    @Test func fixesWorseThanDesiredOrOfUnknownAccuracyDoNotSatisfy() async {
        let rig = AsyncRig()
        let request = rig.request(desiredAccuracy: 10)
        await rig.clock.waitForSleepers(1)

        rig.source.send(.sample(second: 1, accuracy: 50))
        rig.source.send(.sample(second: 2, accuracy: nil))
        rig.source.send(.sample(second: 3, accuracy: 10.5))
        #expect(rig.clock.sleeperCount == 1, "still waiting")
        #expect(rig.source.isRunning)

        let exact = Location.sample(second: 4, accuracy: 10)
        rig.source.send(exact)
        #expect(await request.value == .fix(exact), "an accuracy equal to the desired one qualifies")
    }

    @Test func onTimeoutBestLocationIsTheMostAccurateFixSeen() async throws {
        let rig = AsyncRig()
        let request = rig.request(timeout: .seconds(5), desiredAccuracy: 10)
        await rig.clock.waitForSleepers(1)
        let best = Location.sample(second: 3, accuracy: 20)
        for fix: Location in [.sample(second: 1, accuracy: 50), .sample(second: 2, accuracy: nil), best,
                              .sample(second: 4, accuracy: 30), .sample(second: 5, accuracy: nil)] {
            rig.source.send(fix)
        }

        rig.clock.advance(by: .seconds(5))

        let error = try #require(await request.value.locationError)
        #expect(error.code == .timedOut)
        #expect(error.bestLocation == best)
        #expect(error.message.contains("10.0 m"))
    }

    @Test func aFixOfUnknownAccuracyIsTheBestOnlyWhenNoneIsKnown() async throws {
        let rig = AsyncRig()
        let request = rig.request(timeout: .seconds(5), desiredAccuracy: 10)
        await rig.clock.waitForSleepers(1)
        let unknown = Location.sample(second: 1, accuracy: nil)
        rig.source.send(unknown)

        rig.clock.advance(by: .seconds(5))

        #expect(try #require(await request.value.locationError).bestLocation == unknown)
    }
}

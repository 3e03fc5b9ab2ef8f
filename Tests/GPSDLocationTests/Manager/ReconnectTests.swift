import Dispatch
import Foundation
import GPSDLocation
import GPSDSystem
import GPSDTestSupport
import Testing

/// Reconnection, on a scripted source and the manual clock: every delay is exact (the rig's policy has no
/// jitter) and every timer runs when the test advances the clock.
@Suite("LocationManager: reconnecting", .timeLimit(.minutes(1)))
struct ReconnectTests: ManagerTesting {
    static let policy = ReconnectPolicy(jitter: 0)
    let rig = ManagerRig(reconnect: ReconnectTests.policy)
    let lost = LocationError(.connectionLost, "connection to gpsd lost: gpsd closed the connection")
    let refused = LocationError(.gpsdUnavailable, "cannot connect to gpsd: connect: Connection refused")

    @Test func continuousUpdatesGoOnAfterTheConnectionDrops() {
        manager.startUpdatingLocation()
        source.send(.connected)
        source.send(Location.sample(second: 1))
        source.send(.failed(lost))
        #expect(source.openCount == 1 && source.closeCount == 1)
        #expect(manager.status == .reconnecting(attempt: 2, after: .milliseconds(250), because: lost))
        clock.advance(by: .milliseconds(249))
        #expect(source.openCount == 1, "not before the delay")
        clock.advance(by: .milliseconds(1))
        #expect(source.openCount == 2, "the next attempt, 0.25 s later")
        source.send(.connected)
        source.send(Location.sample(second: 2))
        drain()
        #expect(delegate.locations == [Location.sample(second: 1), Location.sample(second: 2)])
        #expect(delegate.errors.isEmpty, "a dropped connection is a status, not an error")
        #expect(delegate.statuses.map(\.name) == [
            "connecting", "connected", "fix", "reconnecting", "connecting", "connected", "fix",
        ])
    }

    @Test func theDelayDoublesUpToItsCapAndResetsOnceAConnectionBringsAFix() {
        manager.startUpdatingLocation()
        var delays: [Duration] = []
        for _ in 0..<8 {
            source.send(.failed(refused))
            guard case .reconnecting(_, let delay, refused) = manager.status else {
                Issue.record("not reconnecting: \(manager.status)")
                return
            }
            delays.append(delay)
            clock.advance(by: delay)
        }
        #expect(delays == [.milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(8),
                           .seconds(8), .seconds(8)])
        #expect(manager.status == .connecting(attempt: 9))
        // A peer that accepts and hangs up at once (a gpsd at its limit of clients) has not held a connection.
        source.send(.connected)
        source.send(.failed(lost))
        #expect(manager.status == .reconnecting(attempt: 10, after: .seconds(8), because: lost), "still backing off")
        clock.advance(by: .seconds(8))
        // gpsd's banner and device list prove nothing: a peer can greet and hang up.
        source.send(.connected)
        source.send([.report(.version("3.22")), .report(.devices(count: 1)), .report(.device(path: "/dev/x", active: true))])
        source.send(.failed(lost))
        #expect(manager.status == .reconnecting(attempt: 11, after: .seconds(8), because: lost), "still backing off")
        clock.advance(by: .seconds(8))
        // A fix does.
        source.send(.connected)
        source.send(Location.sample(second: 1))
        source.send(.failed(lost))
        #expect(manager.status == .reconnecting(attempt: 2, after: .milliseconds(250), because: lost), "counted afresh")
        drain()
        #expect(delegate.errors.isEmpty)
    }

    @Test func aConnectionThatHoldsTenSecondsWithoutAFixProvesItself() {
        manager.startUpdatingLocation()
        for _ in 0..<3 {
            source.send(.failed(refused))
            guard case .reconnecting(_, let delay, _) = manager.status else { Issue.record("\(manager.status)"); return }
            clock.advance(by: delay)
        }
        // A receiver without a fix reports for 9.9 s: not yet proved.
        source.send(.connected)
        source.send(.report(.sky(SatelliteCount(visible: 9, used: 0))))
        clock.advance(by: .milliseconds(9_900))
        source.send(.report(.noFix(device: "/dev/x", time: nil)))
        source.send(.failed(lost))
        #expect(manager.status == .reconnecting(attempt: 5, after: .seconds(2), because: lost))
        clock.advance(by: .seconds(2))
        // A gpsd waiting for a receiver says nothing after its greeting; held 10 s, the connection was good, and
        // the next failure starts the backoff over.
        source.send(.connected)
        source.send(.report(.version("3.22")))
        clock.advance(by: .seconds(10))
        source.send(.failed(lost))
        #expect(manager.status == .reconnecting(attempt: 2, after: .milliseconds(250), because: lost))
    }

    @Test func aPeerThatGreetsAndHangsUpEndsTheStreamAfterTheRetriesAllowed() {
        manager.reconnectPolicy = ReconnectPolicy(jitter: 0, maximumRetries: 2)
        manager.startUpdatingLocation()
        var attempts = 0
        while source.isRunning, attempts < 10 {
            attempts += 1
            source.send(.connected)
            source.send(.report(.version("3.22")))
            source.send(.failed(lost))
            if case .reconnecting(_, let delay, _) = manager.status { clock.advance(by: delay) }
        }
        drain()
        #expect(attempts == 3, "the first connection and two retries")
        #expect(delegate.errors == [lost])
        #expect(manager.status == .stopped)
    }

    @Test func aRequestWhoseFirstConnectionIsRefusedFailsAtOnce() {
        manager.requestLocation()
        source.send(.failed(refused))
        drain()
        #expect(delegate.errors == [refused])
        #expect(!source.isRunning && clock.pendingTimerCount == 1, "only the request's own timeout is left")
        #expect(manager.status == .stopped)
    }

    @Test func aRequestWhoseConnectionDroppedWaitsForTheNext() {
        manager.requestLocation()
        source.send(.connected)
        source.send(.failed(lost))
        clock.advance(by: .milliseconds(250))
        #expect(source.openCount == 2)
        source.send(.failed(refused))   // a refused attempt no longer ends it: it had a connection
        clock.advance(by: .milliseconds(500))
        source.send(.connected)
        let fix = Location.sample(second: 7)
        source.send(fix)
        drain()
        #expect(delegate.locations == [fix])
        #expect(delegate.errors.isEmpty)
        #expect(!source.isRunning)
    }

    @Test func aRequestJoiningAConnectedSessionWaitsForTheNextAfterADrop() async throws {
        let gps = AsyncLocationManager(manager: manager)
        let updates = gps.updates()
        await source.waitForOpening()
        source.send(.connected)
        manager.requestLocation()   // joins the session that has connected
        source.send(.failed(lost))
        drain()
        #expect(delegate.errors.isEmpty, "its connection dropped: it waits for the next one")
        clock.advance(by: .milliseconds(250))
        source.send(.connected)
        let fix = Location.sample(second: 4)
        source.send(fix)
        drain()
        #expect(delegate.locations == [fix])
        var iterator = updates.makeAsyncIterator()
        #expect(try await iterator.next() == fix)
        await gps.stop()
    }

    @Test func aStreamSurvivesWhileARequestThatNeverConnectedFails() async throws {
        let gps = AsyncLocationManager(manager: manager)
        let request = Task { try await gps.requestLocation(timeout: .seconds(60)) }
        await source.waitForOpening()   // the request has subscribed: it opened the session
        let updates = gps.updates()
        source.send(.failed(refused))
        let error = await #expect(throws: LocationError.self) { try await request.value }
        #expect(error?.code == .gpsdUnavailable)
        clock.advance(by: .milliseconds(250))
        source.send(.connected)
        source.send(Location.sample(second: 3))
        var iterator = updates.makeAsyncIterator()
        #expect(try await iterator.next() == Location.sample(second: 3), "the stream went on")
        await gps.stop()
    }

    @Test func whenRetriesRunOutTheFailureEndsTheWatch() {
        manager.reconnectPolicy = ReconnectPolicy(jitter: 0, maximumRetries: 2)
        manager.startUpdatingLocation()
        source.send(.failed(refused))
        clock.advance(by: .milliseconds(250))
        source.send(.failed(refused))
        clock.advance(by: .milliseconds(500))
        source.send(.failed(refused))
        drain()
        #expect(delegate.errors == [refused])
        #expect(source.openCount == 3 && !source.isRunning)
        #expect(manager.status == .stopped)
    }

    @Test func stoppingDuringTheBackoffCancelsTheNextAttempt() {
        manager.startUpdatingLocation()
        source.send(.failed(refused))
        manager.stopUpdatingLocation()
        #expect(manager.status == .stopped)
        clock.advance(by: .seconds(1))
        #expect(source.openCount == 1, "the timer found nothing to reconnect")
    }

    /// The reconnection timer opens the next session on its own thread while another thread stops: the stop
    /// returns only once that session is closed again, not while it is halfway open. Many rounds, so the stop
    /// lands at every step of the opening.
    @Test func aStopWhileTheTimerOpensTheNextSessionReturnsWithItClosed() {
        for round in 0..<100 {
            let rig = ManagerRig(reconnect: Self.policy)
            rig.manager.startUpdatingLocation()
            rig.source.send(.failed(refused))
            let (started, stopped) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
            let runningAfterStop = Locked<Bool?>(nil)
            rig.source.onNextOpening(.afterOpening) {
                Thread {
                    started.signal()
                    rig.manager.stopUpdatingLocation()
                    runningAfterStop.withLock { $0 = rig.source.isRunning }
                    stopped.signal()
                }.start()
                started.wait()   // not for the stop: the opening goes on while it comes
            }
            rig.clock.advance(by: .milliseconds(250))   // the timer opens session 2, on this thread
            stopped.wait()
            #expect(runningAfterStop.withLock { $0 } == false, "round \(round): a session was open after the stop returned")
            #expect(rig.source.isIdle && rig.manager.status == .stopped, "round \(round): \(rig.manager.status)")
        }
    }

    @Test func aFixSentAgainAfterTheReconnectionIsNotDeliveredTwice() {
        manager.startUpdatingLocation()
        source.send(.connected)
        let last = Location.sample(second: 5)
        source.send(last)
        source.send(.failed(lost))
        clock.advance(by: .milliseconds(250))
        source.send(.connected)
        source.send(last)                     // gpsd's current fix, sent again on the new connection
        source.send(Location.sample(second: 6))
        drain()
        #expect(delegate.locations == [last, Location.sample(second: 6)])
    }

    @Test func aRequestForGPSDsHeldFixAsksTheSessionAfterAReconnection() {
        let id = manager.reserveSubscription()
        manager.subscribe(id, .oneShot(maximumAge: .seconds(5))) { _ in }
        source.send(.connected)
        source.send(.failed(lost))
        clock.advance(by: .milliseconds(250))
        #expect(source.heldFixRequests(inSession: 1) == 1)
        #expect(source.heldFixRequests(inSession: 2) == 1, "asked again on the new connection")
        manager.unsubscribe(id)
    }

    @Test func gpsdsErrorIsNotRetried() {
        manager.startUpdatingLocation()
        source.send(.connected)
        source.send(.report(.error("No such device as /dev/nonexistent")))
        drain()
        #expect(delegate.errors.map(\.code) == [.protocolError])
        #expect(manager.status == .stopped)
        clock.advance(by: .seconds(60))
        #expect(source.openCount == 1, "no reconnection")
    }
}

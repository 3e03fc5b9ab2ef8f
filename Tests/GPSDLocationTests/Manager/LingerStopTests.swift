import Foundation
import GPSDLocation
import GPSDSystem
import GPSDTestSupport
import Testing

/// The linger against the promises made before it: a stop closes the session before it returns whatever was
/// pending, and a request made while the watch has not reached gpsd fails at once whatever the threads' order.
/// Timers run on the manual clock.
@Suite("LocationManager: the linger against stops and refusals", .timeLimit(.minutes(1)))
struct LingerStopTests {
    static let refused = LocationError(.gpsdUnavailable, "cannot connect to gpsd: connect: Connection refused")

    /// stop() ends a pending request by giving its subscription back, as a cancellation does; the session must not
    /// linger for it.
    @Test("async: stop() with a request pending closes the session before it returns")
    func stopWithAPendingRequestDoesNotLinger() async {
        let rig = AsyncRig(linger: .seconds(3))
        let request = rig.request()
        await rig.clock.waitForSleepers(1)   // subscribed: its timeout sleeps
        rig.source.send(.connected)
        #expect(rig.source.isRunning)
        await rig.gps.stop()
        #expect(await request.value == .cancelled)
        #expect(rig.source.isIdle, "when stop() returns, nothing else wanting fixes, the session has ended")
        #expect(rig.gps.manager.status == .stopped)
    }

    /// stop() takes its pending requests out, then gives each subscription back without lingering. A fix that
    /// ends one of them in between (on the session's thread) has already ended its subscription and started the
    /// linger: the stop's giving back must still close the session, or stop() returns with it open for the
    /// linger. Here the fix comes first, then the stop's give-back, on one thread, in that order.
    @Test("a stop's give-back closes a session its request's fix left lingering just before")
    func aStopsGiveBackAfterTheFixClosesTheLinger() {
        let rig = ManagerRig(linger: .seconds(3))
        let id = rig.manager.reserveSubscription()
        let events = Locked<[SubscriptionEvent]>([])
        rig.manager.subscribe(id, .oneShot()) { event in events.withLock { $0.append(event) } }
        rig.source.send(.connected)
        #expect(rig.source.send(Location.sample(second: 1)))
        #expect(events.withLock { $0 } == [.location(Location.sample(second: 1))], "the fix ended it")
        #expect(rig.source.isRunning, "lingering")
        #expect(rig.manager.unsubscribe(id, lingering: false) == nil, "ended already")
        rig.manager.settleSessions(upTo: rig.manager.sessionNumber)
        #expect(rig.source.isIdle, "the stop closed the session the fix left lingering")
        #expect(rig.manager.status == .stopped)
    }

    /// A request made while the linger's end closes the session opens the next watch; that watch's first attempt is
    /// refused. A request made a moment later (after the close) fails at once; this one must too.
    @Test("a request made while the lingering session closes fails with the next watch's refused first attempt")
    func aRequestDuringTheLingersCloseFailsWithTheRefusal() {
        let rig = ManagerRig(reconnect: ReconnectPolicy(jitter: 0), linger: .seconds(3))
        rig.manager.requestLocation()
        rig.source.send(.connected)
        rig.source.send(Location.sample(second: 1))
        rig.source.onNextClosing { rig.manager.requestLocation() }
        rig.clock.advance(by: .seconds(3))   // the linger ends: the session closes, the request comes meanwhile
        #expect(rig.source.openCount == 2, "the request opened the next watch")
        rig.source.send(.failed(Self.refused))
        rig.manager.delegateQueue.sync {}
        #expect(rig.delegate.errors == [Self.refused], "answered at once, as a request made after the close is")
        rig.manager.stopUpdatingLocation()
    }

    /// The same request made just after the close: the order the test above must match.
    @Test("a request made after the lingering session closed fails with the next watch's refused first attempt")
    func aRequestAfterTheLingersCloseFailsWithTheRefusal() {
        let rig = ManagerRig(reconnect: ReconnectPolicy(jitter: 0), linger: .seconds(3))
        rig.manager.requestLocation()
        rig.source.send(.connected)
        rig.source.send(Location.sample(second: 1))
        rig.clock.advance(by: .seconds(3))
        #expect(rig.source.isIdle)
        rig.manager.requestLocation()
        #expect(rig.source.openCount == 2)
        rig.source.send(.failed(Self.refused))
        rig.manager.delegateQueue.sync {}
        #expect(rig.delegate.errors == [Self.refused])
        rig.manager.stopUpdatingLocation()
    }
}

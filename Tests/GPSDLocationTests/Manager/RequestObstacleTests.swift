import Foundation
import GPSDLocation
import GPSDTestSupport
import Testing

/// What stands in the way of a one-shot request, said the same way whatever it is: a request made once the watch
/// has reached gpsd waits out reconnection, gpsd unreachable, no receiver, a receiver gone, until its timeout,
/// whose error names the status then; before gpsd has been reached, a request fails with the first attempt that
/// fails, at once if one has, whichever came first.
@Suite("LocationManager: what stood in the way of a request", .timeLimit(.minutes(1)))
struct RequestObstacleTests: ManagerTesting {
    let rig = ManagerRig(reconnect: ReconnectPolicy(jitter: 0))
    static let refused = LocationError(.gpsdUnavailable, "cannot connect to gpsd: connect: Connection refused")
    static let lost = LocationError(.connectionLost, "connection to gpsd lost: gpsd closed the connection")

    /// The delegate's request, made now, at its timeout.
    private func requestTimesOut() throws -> LocationError {
        manager.requestTimeout = .seconds(2)
        manager.requestLocation()
        clock.advance(by: .seconds(2))
        drain()
        return try #require(delegate.errors.last)
    }

    @Test("a request made during the backoff of a refused first attempt fails at once with the refusal")
    func aRequestAfterTheFirstAttemptWasRefused() throws {
        manager.startUpdatingLocation()
        source.send(.failed(Self.refused))                 // the updates' first attempt: reconnecting in 0.25 s
        manager.requestLocation()
        drain()
        #expect(delegate.errors == [Self.refused], "as if it had been made a moment earlier, for that attempt")
        clock.advance(by: .milliseconds(250))
        #expect(source.openCount == 2, "the updates go on trying")
    }

    @Test("a request made while reconnecting to a gpsd that refuses waits for its timeout, which says gpsd is unreachable")
    func aRequestDuringTheBackoffOfARefusedConnection() throws {
        manager.startUpdatingLocation()
        source.send(.connected)
        source.send(.failed(Self.lost))                    // reached once, then lost: reconnecting in 0.25 s
        manager.requestTimeout = .seconds(2)
        manager.requestLocation()
        clock.advance(by: .milliseconds(250))
        source.send(.failed(Self.refused))                 // the next attempt, refused again
        drain()
        #expect(delegate.errors == [], "not failed at once: another attempt may reach gpsd within the timeout")
        clock.advance(by: .milliseconds(1750))
        drain()
        let error = try #require(delegate.errors.first)
        #expect(error.code == .locationUnknown)
        // Attempt 3 is under way at the timeout: the status says connecting, the message what it retries after.
        #expect(error.message == "no fix in 2.0 seconds: gpsd unreachable: cannot connect to gpsd: connect: Connection "
            + "refused; connecting (attempt 3)")
        #expect(error.status == .connecting(attempt: 3))
    }

    @Test func aRequestWhileReconnectingAfterALostConnectionSaysSo() throws {
        manager.reconnectPolicy = ReconnectPolicy(initialDelay: .seconds(5), jitter: 0)
        manager.startUpdatingLocation()
        source.send(.connected)
        source.send(.failed(Self.lost))
        let error = try requestTimesOut()
        #expect(error.message == "no fix in 2.0 seconds: connection lost: connection to gpsd lost: gpsd closed the "
            + "connection; reconnecting (attempt 2)")
        #expect(error.status?.name == "reconnecting")
    }

    @Test func aRequestWithTheReceiverGoneSaysSo() throws {
        manager.startUpdatingLocation()
        source.send(.connected)
        source.send(Location.sample(second: 1))
        source.send(.report(.device(path: "/dev/ttyUSB0", active: false)))
        let error = try requestTimesOut()
        #expect(error.message == "no fix in 2.0 seconds: receiver gone (/dev/ttyUSB0)")
        #expect(error.status == .deviceGone(device: "/dev/ttyUSB0"))
        #expect(error.bestLocation == Location.sample(second: 1))
    }

    @Test func aRequestWithNoReceiverSaysSo() throws {
        manager.startUpdatingLocation()
        source.send(.connected)
        source.send(.report(.devices(count: 0)))
        let error = try requestTimesOut()
        #expect(error.message == "no fix in 2.0 seconds: gpsd has no receiver")
        #expect(error.status == .noDevice)
    }

    @Test func theWatchsFirstAttemptFailsTheRequestsMadeForItAtOnce() throws {
        manager.requestLocation()
        source.send(.failed(Self.refused))
        drain()
        #expect(delegate.errors == [Self.refused])
    }

    /// The order whereami's one fix met by chance on a busy machine: the stream beside the request started the watch,
    /// and its first attempt was refused before the request subscribed.
    @Test("async: a request made after a stream's first attempt was refused fails at once")
    func anAsyncRequestAfterTheStreamsFirstAttemptWasRefused() async throws {
        let rig = AsyncRig(reconnect: ReconnectPolicy(jitter: 0))
        let updates = rig.gps.updates()
        await rig.source.waitForOpening()
        rig.source.send(.failed(Self.refused))
        let request = rig.request(timeout: .seconds(30))
        let error = try #require(await request.value.locationError)
        #expect(error == Self.refused)
        #expect(rig.source.openCount == 1, "answered without another attempt, and without its timeout")
        _ = updates
        await rig.gps.stop()
    }

    @Test("async: a request while reconnecting times out naming gpsd unreachable, with the status")
    func anAsyncRequestDuringTheBackoff() async throws {
        let rig = AsyncRig(reconnect: ReconnectPolicy(jitter: 0))
        let updates = rig.gps.updates()
        await rig.source.waitForOpening()
        rig.source.send(.connected)
        rig.source.send(.failed(Self.lost))
        let request = rig.request(timeout: .seconds(2))
        await rig.clock.waitForSleepers(1)
        rig.managerClock.advance(by: .milliseconds(250))
        await rig.source.waitForOpening(count: 2)
        rig.source.send(.failed(Self.refused))
        rig.clock.advance(by: .seconds(2))
        let error = try #require(await request.value.locationError)
        #expect(error.code == .timedOut)
        #expect(error.message == "no fix in 2.0 seconds: gpsd unreachable: cannot connect to gpsd: connect: Connection "
            + "refused; reconnecting (attempt 3)")
        #expect(error.status == .reconnecting(attempt: 3, after: .milliseconds(500), because: Self.refused))
        _ = updates
        await rig.gps.stop()
    }

    @Test func anAsyncRequestWithTheReceiverGoneSaysSo() async throws {
        let rig = AsyncRig()
        let request = rig.request(timeout: .seconds(2))
        await rig.source.waitForOpening()
        rig.source.send(.connected)
        rig.source.send(.report(.device(path: "/dev/ttyUSB0", active: false)))
        await rig.clock.waitForSleepers(1)
        rig.clock.advance(by: .seconds(2))
        let error = try #require(await request.value.locationError)
        #expect(error.code == .timedOut)
        #expect(error.message == "no fix in 2.0 seconds: receiver gone (/dev/ttyUSB0)")
        #expect(error.status == .deviceGone(device: "/dev/ttyUSB0"))
    }
}

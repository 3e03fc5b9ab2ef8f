import Foundation
import GPSDLocation
import GPSDTestSupport
import Testing

/// ``LocationStatus`` as the manager derives it from what its sessions report, and the watchdog that says when
/// they fall silent; on a scripted source and the manual clock.
@Suite("LocationManager: status", .timeLimit(.minutes(1)))
struct StatusTests: ManagerTesting {
    let rig = ManagerRig(reconnect: ReconnectPolicy(jitter: 0))

    private func noFix() -> SourceEvent { .report(.noFix(device: "/dev/ttyUSB0", time: nil)) }

    @Test func aSessionFromConnectingToAFix() {
        #expect(manager.status == .stopped)
        manager.startUpdatingLocation()
        #expect(manager.status == .connecting(attempt: 1))
        source.send(.connected)
        source.send(.report(.version("3.22")))
        source.send(.report(.devices(count: 0)))
        #expect(manager.status == .noDevice)
        source.send(.report(.device(path: "/dev/ttyUSB0", active: true)))
        #expect(manager.status == .waitingForFix(satellites: nil))
        source.send(noFix())
        source.send(.report(.noFix(second: 0)))
        source.send(.report(.sky(SatelliteCount(visible: 9, used: 0))))
        #expect(manager.status == .waitingForFix(satellites: nil), "the epoch may bring more satellites")
        source.send(.report(.noFix(second: 1)))   // the next epoch: the satellites of the one before are whole
        #expect(manager.status == .waitingForFix(satellites: SatelliteCount(visible: 9, used: 0)))
        source.send(.report(.sky(SatelliteCount(visible: 11, used: 6))))
        var twoD = Location.sample(second: 2)
        twoD.fix = .twoDimensional
        source.send(twoD)
        source.send(Location.sample(second: 3))
        source.send(Location.sample(second: 4))   // the same kind of fix: no new status
        drain()
        #expect(delegate.statuses == [
            .connecting(attempt: 1), .connected(gpsdVersion: nil), .connected(gpsdVersion: "3.22"), .noDevice,
            .waitingForFix(satellites: nil), .waitingForFix(satellites: SatelliteCount(visible: 9, used: 0)),
            .waitingForFix(satellites: SatelliteCount(visible: 11, used: 6)), .fix(.twoDimensional, .gps),
            .fix(.threeDimensional, .gps),
        ])
    }

    @Test("the delegate hears of each epoch's satellites while it has updates on, and not after it stops them")
    func theDelegateHearsOfTheSatellites() {
        let satellites = [
            Satellite(constellation: .gps, id: 5, prn: 5, elevation: 40, azimuth: 90, signalStrength: 41, isUsed: true),
            Satellite(constellation: .glonass, id: 6, prn: 70, elevation: 20, azimuth: 300, signalStrength: 30),
        ]
        let first = SkyView(satellites: satellites, dilution: .init(horizontal: 1.1), device: "/dev/ttyUSB0")
        source.send(.report(.sky(first, listed: true)))   // nothing watched yet: no session, nothing told
        manager.startUpdatingLocation()
        source.send(.connected)
        source.send(.report(.noFix(second: 1, device: "/dev/ttyUSB0")))
        source.send(.report(.sky(first, listed: true)))
        // The next epoch ends the first; a SKY of DOPs alone keeps the satellites the receiver listed last.
        source.send(.report(.noFix(second: 2, device: "/dev/ttyUSB0")))
        let dops = SkyView(satellites: [], visible: 0, used: 1, dilution: .init(horizontal: 0.9), device: "/dev/ttyUSB0")
        source.send(.report(.sky(dops, listed: false)))
        source.send(.report(.noFix(second: 3, device: "/dev/ttyUSB0")))
        drain()
        var stamped = first
        stamped.timestamp = Location.sample(second: 1).timestamp
        var merged = first
        merged.dilution = .init(horizontal: 0.9)
        merged.timestamp = Location.sample(second: 2).timestamp
        #expect(delegate.skies == [stamped, merged], "each stamped with its epoch's time")
        #expect(manager.sky == merged)
        manager.stopUpdatingLocation()
        source.send(.report(.sky(first, listed: true)))
        drain()
        #expect(delegate.skies == [stamped, merged], "not told after stopUpdatingLocation()")
    }

    @Test func aLostFixIsToldOnceUntilAFixReturns() {
        manager.startUpdatingLocation()
        source.send(.connected)
        source.send(Location.sample(second: 1))
        source.send(noFix())
        source.send(noFix())
        source.send(.report(.sky(SatelliteCount(visible: 4, used: 0))))
        source.send(noFix())
        source.send(Location.sample(second: 5))
        drain()
        #expect(delegate.statuses.map(\.name) == ["connecting", "connected", "fix", "fixLost", "fix"])
    }

    @Test func aReceiverThatGoesAwayAndComesBack() {
        manager.startUpdatingLocation()
        source.send(.connected)
        source.send(Location.sample(second: 1))
        source.send(.report(.device(path: "/dev/ttyUSB0", active: false)))
        #expect(manager.status == .deviceGone(device: "/dev/ttyUSB0"))
        source.send(.report(.device(path: "/dev/ttyUSB0", active: true)))
        #expect(manager.status == .waitingForFix(satellites: nil))
        source.send(Location.sample(second: 9))
        #expect(manager.status == .fix(.threeDimensional, .gps))
    }

    @Test("receiver gone stays until a receiver reports again: gpsd's silence then is not news")
    func aReceiverGoneStaysGoneThroughTheSilence() {
        manager.staleTimeout = .seconds(5)
        manager.startUpdatingLocation()
        source.send(.connected)
        source.send(Location.sample(second: 1))
        source.send(.report(.device(path: "/dev/ttyUSB0", active: false)))
        clock.advance(by: .seconds(60))
        #expect(manager.status == .deviceGone(device: "/dev/ttyUSB0"), "not `no report for 5 s`")
        source.send(.report(.device(path: "/dev/ttyUSB0", active: true)))
        #expect(manager.status == .waitingForFix(satellites: nil))
        clock.advance(by: .seconds(5))
        #expect(manager.status == .stale(silentFor: .seconds(5)), "a receiver that is there and silent is stale")
        drain()
        #expect(delegate.statuses.map(\.name) == ["connecting", "connected", "fix", "deviceGone", "waitingForFix", "stale"])
    }

    @Test func gpsdWithoutAReceiverStaysSoThroughTheSilence() {
        manager.startUpdatingLocation()
        source.send(.connected)
        source.send(.report(.devices(count: 0)))
        clock.advance(by: .seconds(60))
        #expect(manager.status == .noDevice)
    }

    @Test func silenceMakesTheStatusStaleAndAnyReportEndsIt() {
        manager.staleTimeout = .seconds(5)
        manager.startUpdatingLocation()
        source.send(.connected)
        source.send(Location.sample(second: 1))
        clock.advance(by: .seconds(3))
        source.send(Location.sample(second: 2))   // heard at 3 s: stale no sooner than at 8 s
        clock.advance(by: .seconds(4))
        #expect(manager.status == .fix(.threeDimensional, .gps), "7 s: 4 s of silence")
        clock.advance(by: .seconds(1))
        #expect(manager.status == .stale(silentFor: .seconds(5)), "8 s: 5 s of silence")
        clock.advance(by: .seconds(60))
        #expect(manager.status == .stale(silentFor: .seconds(5)), "told once")
        source.send(.skippedLine)
        #expect(manager.status == .stale(silentFor: .seconds(5)), "garbage is not a report")
        source.send(Location.sample(second: 3))
        #expect(manager.status == .fix(.threeDimensional, .gps))
        clock.advance(by: .seconds(5))
        #expect(manager.status == .stale(silentFor: .seconds(5)), "and the watchdog watches again")
        drain()
        #expect(delegate.statuses.map(\.name) == ["connecting", "connected", "fix", "stale", "fix", "stale"])
    }

    @Test func theWatchdogOfAClosedSessionDoesNothingInTheNext() {
        manager.staleTimeout = .seconds(5)
        manager.startUpdatingLocation()
        source.send(.connected)                          // session 1's watchdog: due at 5 s
        clock.advance(by: .seconds(1))
        source.send(.failed(LocationError(.connectionLost, "gpsd closed the connection")))
        clock.advance(by: .milliseconds(250))            // session 2 opens at 1.25 s
        source.send(.connected)                          // its watchdog: due at 6.25 s
        clock.advance(by: .milliseconds(3750))           // 5 s
        #expect(manager.status == .connected(gpsdVersion: nil), "session 1's timer found nothing to do")
        clock.advance(by: .milliseconds(1250))           // 6.25 s
        #expect(manager.status == .stale(silentFor: .seconds(5)))
    }

    @Test func aConnectionThatSaysNothingGoesStale() {
        manager.startUpdatingLocation()
        source.send(.connected)
        clock.advance(by: LocationManager.defaultStaleTimeout)
        #expect(manager.status == .stale(silentFor: .seconds(5)))
    }

    @Test func theDelegateHearsNoStatusAfterItStopped() {
        manager.startUpdatingLocation()
        source.send(.connected)
        drain()   // a stop drops callbacks not yet made: these two are made
        manager.stopUpdatingLocation()
        #expect(manager.status == .stopped)
        drain()
        #expect(delegate.statuses == [.connecting(attempt: 1), .connected(gpsdVersion: nil)], "no stopped after the stop")
    }

    @Test func theStatusStreamStartsWithTheStatusNowThenFollowsEachChangeAndEndsWithStop() async {
        let gps = AsyncLocationManager(manager: manager)
        manager.startUpdatingLocation()
        source.send(.connected)
        var statuses = gps.statusUpdates().makeAsyncIterator()
        #expect(await statuses.next() == .connected(gpsdVersion: nil), "the status now")
        source.send(noFix())
        #expect(await statuses.next() == .waitingForFix(satellites: nil))
        source.send(Location.sample(second: 1))
        #expect(await statuses.next() == .fix(.threeDimensional, .gps))
        await gps.stop()
        #expect(await statuses.next() == nil, "stop() ends it")
        manager.stopUpdatingLocation()
    }
}

import Foundation
import GPSDLocation
import GPSDSystem
import GPSDTestSupport
import Testing

/// The session that lingers after the last one-shot request (``LocationManager/sessionLinger``): a loop of
/// requests holds one session, its status and counts stay as a user reads them, the linger ends with its timer, and
/// every stop still closes the session at once. Timers run on the manual clock.
@Suite("LocationManager: the session lingers after the last request", .timeLimit(.minutes(1)))
struct LingerTests {
    @Test func theDefaultLingerIsThreeSeconds() {
        let manager = LocationManager(source: ScriptedSource(), clock: ManualManagerClock())
        #expect(manager.sessionLinger == LocationManager.defaultSessionLinger)
        #expect(LocationManager.defaultSessionLinger == .seconds(3))
        manager.sessionLinger = .seconds(-1)
        #expect(manager.sessionLinger == .zero, "a negative linger is none")
        let replay = LocationManager(recording: Array("{}\n".utf8), named: "replay", pace: .asFastAsPossible)
        #expect(replay.sessionLinger == .zero, "a replay plays only while something wants it")
    }

    @Test("async: 30 sequential requests hold one session, one connection, and one status")
    func aLoopOfRequestsHoldsOneSession() async throws {
        let rig = AsyncRig(linger: .seconds(3))
        let statuses = Locked<[LocationStatus]>([])
        rig.gps.manager.addObserver { if case .status(let status) = $0 { statuses.withLock { $0.append(status) } } }
        for second in 1...30 {
            let request = rig.request(timeout: .seconds(10))
            await rig.clock.waitForSleepers(1)   // subscribed: its timeout sleeps
            if second == 1 { rig.source.send(.connected) }
            let fix = Location.sample(second: second)
            #expect(rig.source.send(fix), "the session is open for request \(second)")
            #expect(await request.value == .fix(fix))
            rig.managerClock.advance(by: .milliseconds(100))   // the loop's own work between requests
        }
        #expect(rig.source.openCount == 1 && rig.source.closeCount == 0)
        #expect(rig.gps.manager.snapshot.connections == 1)
        #expect(rig.gps.health.fixes == 30)
        let told = statuses.withLock { $0 }
        let restarts = told.filter { $0.name == "stopped" || $0.name == "connecting" }
        #expect(restarts.count == 1, "one `connecting`, no `stopped` between requests: \(told)")
        rig.managerClock.advance(by: .seconds(3))
        #expect(rig.source.isIdle, "closed once the loop left it for the linger")
        #expect(rig.gps.manager.status == .stopped)
    }

    @Test func theLingerEndsWithItsTimer() {
        let rig = ManagerRig(linger: .seconds(3))
        rig.manager.requestLocation()
        rig.source.send(.connected)
        #expect(rig.source.send(Location.sample(second: 1)))
        rig.manager.delegateQueue.sync {}
        #expect(rig.delegate.locations == [Location.sample(second: 1)])
        rig.clock.advance(by: .milliseconds(2999))
        #expect(rig.source.isRunning, "lingering")
        #expect(rig.source.send(Location.sample(second: 2)), "still reading gpsd")
        #expect(rig.manager.location == Location.sample(second: 2), "the newest fix is kept while it lingers")
        rig.clock.advance(by: .milliseconds(1))
        #expect(rig.source.isIdle)
        rig.manager.delegateQueue.sync {}
        #expect(rig.delegate.locations == [Location.sample(second: 1)], "nothing wanted the fix of the linger")
    }

    @Test func aRequestDuringTheLingerCallsItOffAndItsTimerIsIgnored() {
        let rig = ManagerRig(linger: .seconds(3))
        rig.manager.requestLocation()
        rig.source.send(Location.sample(second: 1))
        rig.clock.advance(by: .seconds(2))
        rig.manager.requestLocation()
        rig.clock.advance(by: .seconds(2))   // past the first linger's end
        #expect(rig.source.isRunning && rig.source.openCount == 1, "the first linger's timer closed nothing")
        rig.source.send(Location.sample(second: 2))
        rig.clock.advance(by: .milliseconds(2999))
        #expect(rig.source.isRunning)
        rig.clock.advance(by: .milliseconds(1))
        #expect(rig.source.isIdle && rig.source.openCount == 1)
        rig.manager.delegateQueue.sync {}
        #expect(rig.delegate.locations == [Location.sample(second: 1), Location.sample(second: 2)])
    }

    @Test func aRequestThatTimesOutLingersToo() {
        let rig = ManagerRig(linger: .seconds(3))
        rig.manager.requestTimeout = .seconds(2)
        rig.manager.requestLocation()
        rig.source.send(.connected)
        rig.clock.advance(by: .seconds(2))
        rig.manager.delegateQueue.sync {}
        #expect(rig.delegate.errors.map(\.code) == [.locationUnknown])
        #expect(rig.source.isRunning, "lingering after the timeout")
        rig.clock.advance(by: .seconds(3))
        #expect(rig.source.isIdle)
    }

    @Test("async: a cancelled request lingers too")
    func aCancelledRequestLingers() async {
        let rig = AsyncRig(linger: .seconds(3))
        let request = rig.request()
        await rig.clock.waitForSleepers(1)
        request.cancel()
        #expect(await request.value == .cancelled)
        #expect(rig.source.isRunning)
        rig.managerClock.advance(by: .seconds(3))
        #expect(rig.source.isIdle)
    }

    @Test func stopUpdatingLocationClosesALingeringSessionAtOnce() {
        let rig = ManagerRig(linger: .seconds(3))
        rig.manager.requestLocation()
        rig.source.send(Location.sample(second: 1))
        #expect(rig.source.isRunning)
        rig.manager.stopUpdatingLocation()
        #expect(rig.source.isIdle, "when it returns, nothing else wanting fixes, the session has ended")
        #expect(rig.manager.status == .stopped)
    }

    @Test("async: stop() closes a lingering session before it returns")
    func stopClosesALingeringSession() async {
        let rig = AsyncRig(linger: .seconds(3))
        let request = rig.request()
        await rig.clock.waitForSleepers(1)
        rig.source.send(Location.sample(second: 1))
        #expect(await request.value == .fix(Location.sample(second: 1)))
        #expect(rig.source.isRunning)
        await rig.gps.stop()
        #expect(rig.source.isIdle)
    }

    @Test("async: a stream's end does not linger")
    func aStreamsEndClosesAtOnce() async throws {
        let rig = AsyncRig(linger: .seconds(3))
        let reader = Task { () async throws -> Location? in
            for try await fix in rig.gps.updates() { return fix }   // one fix, then its sequence goes
            return nil
        }
        await rig.source.waitForOpening()
        rig.source.send(Location.sample(second: 1))
        #expect(try await reader.value == Location.sample(second: 1))
        // Closed by the stream's end with no timer run (a linger would hold it open until the time limit). The
        // status says so once the manager has heard of the close, on the thread that closed it: settled.
        await rig.source.waitUntilIdle()
        await onThread { rig.gps.manager.settleSessions(upTo: rig.gps.manager.sessionNumber) }
        #expect(rig.gps.manager.status == .stopped)
    }

    @Test func aZeroLingerClosesAtOnce() {
        let rig = ManagerRig(linger: .zero)
        rig.manager.requestLocation()
        rig.source.send(Location.sample(second: 1))
        #expect(rig.source.isIdle)
    }
}

import Foundation
import GPSDLocation
import GPSDTestSupport
import Testing

/// `AsyncLocationManager.stop()` is final: a request made afterwards fails with the stop's error
/// (`CancellationError`, as pending requests get), a sequence made afterwards ends at once, and neither starts the
/// gpsd watch again. Whatever the order of a stop and a registration racing it, everything ends.
@Suite("Async stop is final", .timeLimit(.minutes(1)))
struct StopIsFinalTests {
    /// A rig whose session is open and has given a fix, then stopped.
    private func stoppedRig() async throws -> AsyncRig {
        let rig = AsyncRig()
        let updates = rig.gps.updates()
        await rig.source.waitForOpening()
        rig.source.send(.connected)
        #expect(rig.source.send(Location.sample(second: 1)))
        var iterator = updates.makeAsyncIterator()
        #expect(try await iterator.next() == Location.sample(second: 1))
        await rig.gps.stop()
        try #require(rig.source.openCount == 1 && !rig.source.isRunning)
        return rig
    }

    @Test("a request after stop() throws CancellationError at once, even with a fix at hand, and opens no session")
    func aRequestAfterStop() async throws {
        let rig = try await stoppedRig()
        // The fix of a second ago meets a maximum age of a minute: still no fix after a stop.
        #expect(await rig.request(maximumAge: .seconds(60)).value == .cancelled)
        // On the continuous clock: were the request to wait, its timeout would come, not the stop's error.
        let waiting = await AsyncOutcome.of { try await rig.gps.requestLocation(timeout: .milliseconds(1)) }
        #expect(waiting == .cancelled)
        #expect(rig.source.openCount == 1, "no session opened")
        #expect(rig.gps.manager.subscriptionCount == 0)
    }

    @Test("a stream of fixes, updates or headings made after stop() ends at once and opens no session")
    func aSubscribedStreamAfterStop() async throws {
        let rig = try await stoppedRig()
        let fixes = rig.gps.updates()
        let timeline = rig.gps.liveUpdates()
        let headings = rig.gps.headingUpdates()
        try #require(rig.source.openCount == 1, "no session opened")
        for try await fix in fixes { Issue.record("a fix after stop(): \(fix)") }
        for try await update in timeline { Issue.record("an update after stop(): \(update)") }
        for try await heading in headings { Issue.record("a heading after stop(): \(heading)") }
        #expect(rig.gps.manager.subscriptionCount == 0)
    }

    @Test("a satellite or status stream made after stop() ends at once, empty")
    func anObservationStreamAfterStop() async throws {
        let rig = try await stoppedRig()
        for await view in rig.gps.satelliteUpdates() { Issue.record("a view after stop(): \(view)") }
        for await status in rig.gps.statusUpdates() { Issue.record("a status after stop(): \(status)") }
    }

    @Test("the manager underneath is not stopped for good: a new AsyncLocationManager over it watches again")
    func aNewAsyncManagerOverTheSameManager() async throws {
        let rig = try await stoppedRig()
        let again = AsyncLocationManager(manager: rig.gps.manager)
        let request = Task { try await again.requestLocation(timeout: .seconds(60)) }
        await rig.source.waitForOpening(count: 2)
        rig.source.send(.connected)
        #expect(rig.source.send(Location.sample(second: 2)))
        #expect(try await request.value == Location.sample(second: 2))
        await again.stop()
    }

    /// The stop and the registrations race on the pool's threads: a registration before the stop's first step is
    /// ended by it, one after it ends at once; one between its steps (an observation stream's observer added, its
    /// end not yet recorded) is refused when it records its end, and ends itself. A hang is what failed.
    @Test("stop() racing a request and a stream of every kind: each ends, whichever comes first, and no session is left")
    func stopRacingRegistrations() async throws {
        for _ in 0..<(Int(ProcessInfo.processInfo.environment["STOP_RACE_ROUNDS"] ?? "") ?? 200) {
            let rig = AsyncRig()
            let gps = rig.gps
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await gps.stop() }
                group.addTask { _ = try? await gps.requestLocation(timeout: AsyncLocationManager.noTimeout) }
                group.addTask { for await _ in gps.statusUpdates() {} }
                group.addTask { for await _ in gps.satelliteUpdates() {} }
                group.addTask { _ = try? await gps.updates().reduce(0) { count, _ in count + 1 } }
                group.addTask { _ = try? await gps.liveUpdates().reduce(0) { count, _ in count + 1 } }
            }
            await rig.source.waitUntilIdle()
            #expect(!rig.source.isRunning)
        }
    }
}

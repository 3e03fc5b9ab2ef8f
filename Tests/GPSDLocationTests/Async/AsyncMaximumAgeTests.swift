import Foundation
import GPSDLocation
import GPSDTestSupport
import Testing

/// `requestLocation(maximumAge:)`: a recent enough fix at once, else gpsd's held fix (`?POLL;`), else the next.
@Suite("Async requests with a maximum age", .timeLimit(.minutes(1)))
struct AsyncMaximumAgeTests {

    @Test func aFixYoungerThanMaximumAgeIsReturnedAtOnce() async throws {
        let rig = AsyncRig()
        let first = rig.request()
        await rig.source.waitForOpening()
        let fix = Location.sample(second: 1)
        rig.source.send(fix)
        #expect(await first.value == .fix(fix))
        #expect(rig.source.closeCount == 1)

        rig.managerClock.advance(by: .seconds(4))
        let again = try await rig.gps.requestLocation(
            timeout: .seconds(5), maximumAge: .seconds(5), clock: rig.clock)

        #expect(again == fix)
        #expect(rig.source.openCount == 1, "no new watch")
        #expect(rig.source.heldFixRequestCount == 0)
        #expect(rig.clock.sleeperCount == 0)
    }

    @Test func aFixFromAStreamCountsForMaximumAge() async throws {
        let rig = AsyncRig()
        let updates = rig.gps.updates()
        let fix = Location.sample(second: 1)
        rig.source.send(fix)
        rig.managerClock.advance(by: .seconds(2))

        let returned = try await rig.gps.requestLocation(
            timeout: .seconds(5), maximumAge: .seconds(2), clock: rig.clock)

        #expect(returned == fix)
        #expect(rig.source.heldFixRequestCount == 0)
        await rig.gps.stop()
        var iterator = updates.makeAsyncIterator()
        #expect(try await iterator.next() == fix)
        #expect(try await iterator.next() == nil)
    }

    @Test func aFixTooInaccurateForTheRequestIsNotReturnedAtOnce() async {
        let rig = AsyncRig()
        let updates = rig.gps.updates()
        rig.source.send(.sample(second: 1, accuracy: 40))

        let request = rig.request(maximumAge: .seconds(5), desiredAccuracy: 10)
        await rig.clock.waitForSleepers(1)
        #expect(rig.source.heldFixRequestCount == 1)
        let accurate = Location.sample(second: 2, accuracy: 4)
        rig.source.send(accurate)
        #expect(await request.value == .fix(accurate))
        withExtendedLifetime(updates) {}
    }

    @Test func anOlderFixMakesTheRequestPollAndWait() async {
        let rig = AsyncRig()
        let first = rig.request()
        await rig.source.waitForOpening()
        rig.source.send(.sample(second: 1))
        _ = await first.value
        rig.managerClock.advance(by: .seconds(10))

        let request = rig.request(timeout: .seconds(30), maximumAge: .seconds(5))
        await rig.clock.waitForSleepers(1)
        #expect(rig.source.openCount == 2)
        #expect(rig.source.heldFixRequestCount == 1)

        let next = Location.sample(second: 11)
        rig.source.send(next)
        #expect(await request.value == .fix(next))
    }

    @Test func aPolledFixSatisfiesMaximumAgeOnlyWhenYoungEnough() async {
        let rig = AsyncRig()
        let request = rig.request(timeout: .seconds(30), maximumAge: .seconds(5))
        await rig.clock.waitForSleepers(1)
        #expect(rig.source.heldFixRequestCount == 1, "no fix held yet, so it asks gpsd for its current one")

        // gpsd holds a fix 8 s old: too old.
        let stale = Location.sample(second: 1)
        rig.source.send(.report(.poll(time: stale.timestamp.addingTimeInterval(8), reports: [.fix(stale)])))
        #expect(rig.clock.sleeperCount == 1, "still waiting")

        // A later poll reply holds a fix 3 s old: young enough.
        let young = Location.sample(second: 20)
        rig.source.send(.report(.poll(time: young.timestamp.addingTimeInterval(3), reports: [.fix(young)])))
        #expect(await request.value == .fix(young))
        #expect(!rig.source.isRunning)
    }

    @Test func aRequestWithoutMaximumAgeNeitherPollsNorTakesAPolledFix() async {
        let rig = AsyncRig()
        let request = rig.request(timeout: .seconds(30))
        await rig.clock.waitForSleepers(1)
        #expect(rig.source.heldFixRequestCount == 0)

        let polled = Location.sample(second: 1)
        rig.source.send(.report(.poll(time: polled.timestamp.addingTimeInterval(1), reports: [.fix(polled)])))
        #expect(rig.clock.sleeperCount == 1, "a polled fix is not a new one")

        let live = Location.sample(second: 2)
        rig.source.send(live)
        #expect(await request.value == .fix(live))
    }
}

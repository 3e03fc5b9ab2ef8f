import Foundation
import GPSDLocation
import GPSDTestSupport
import Testing

/// A live gpsd's backlog, sent in one burst after a stall, through the streams' default buffering: a reader that
/// keeps up gets every epoch of it, one that never reads holds the newest 16 or the last 2 s (the manager's clock,
/// a manual one here), and what is dropped is counted.
@Suite("A backlog reaches a stream that keeps up", .timeLimit(.minutes(1)))
struct StreamBacklogTests {
    private static let lost = LocationError(.connectionLost, "connection to gpsd at localhost:2947 lost")

    /// The fix of tenth of a second `n`: a 10 Hz receiver moving east at 10 m/s.
    static func tenth(_ n: Int) -> Location {
        var fix = Location.sample(second: 0)
        fix.timestamp += Double(n) / 10
        fix.coordinate.longitude = Double(n) / 111_319.49
        return fix
    }

    /// An 8 s stall's backlog of 80 epochs in one read, then the connection lost, which ends the streams (the
    /// reader takes what is buffered, then the end).
    private static func burst(_ rig: AsyncRig) -> [Location] {
        let fixes = (1...80).map(tenth)
        rig.source.send(fixes.map { .report(.fix($0)) } + [.failed(lost)])
        return fixes
    }

    @Test func aOncePerEpochReaderGetsEveryEpochOfABurst() async throws {
        let rig = AsyncRig()
        let epochs = rig.gps.updates(delivery: .oncePerEpoch)
        let idle = rig.gps.updates(delivery: .oncePerEpoch)   // never read, yet
        await rig.source.waitForOpening()
        let sent = Self.burst(rig)
        var received: [Location] = []
        await #expect(throws: LocationError.self) {
            for try await fix in epochs { received.append(fix) }
        }
        // The connection lost passes on the open epoch: every one of the 80.
        #expect(received.map(\.timestamp) == sent.map(\.timestamp))
        #expect(epochs.droppedCount == 0)
        // Nothing has waited 2 s: a stream nobody has read yet holds all of it too.
        #expect(idle.yieldedCount == 80 && idle.droppedCount == 0)
        #expect(rig.gps.health.streamDrops == 0)
    }

    @Test func aLiveTimelineGetsEveryFixOfABurst() async throws {
        let rig = AsyncRig()
        let timeline = rig.gps.liveUpdates()
        await rig.source.waitForOpening()
        let sent = Self.burst(rig)
        var fixes: [Location] = []
        await #expect(throws: LocationError.self) {
            for try await update in timeline where update.isNewFix {
                if let fix = update.location { fixes.append(fix) }
            }
        }
        #expect(fixes.map(\.timestamp) == sent.map(\.timestamp))
        #expect(timeline.droppedCount == 0)
    }

    @Test func aStreamNeverReadHoldsTheNewestSixteenOrTheLastTwoSecondsAndCountsTheRest() async throws {
        let rig = AsyncRig()
        let idle = rig.gps.updates(delivery: .oncePerEpoch)
        await rig.source.waitForOpening()
        // A minute at 10 Hz, one report an epoch: once two epochs have shown it, each is passed on at its report.
        for n in 0..<600 {
            rig.managerClock.advance(by: .milliseconds(100))
            rig.source.send(Self.tenth(n))
        }
        // Held: the epochs of the last 2 s, ends included.
        #expect(idle.yieldedCount == 600)
        #expect(idle.yieldedCount - idle.droppedCount == 21)
        #expect(rig.gps.health.streamDrops == idle.droppedCount)
        // A burst of 80 at once is held whole, until it has waited more than 2 s; then the newest 16 are left.
        rig.source.send((600..<680).map { .report(.fix(Self.tenth($0))) })
        #expect(idle.yieldedCount - idle.droppedCount == 21 + 80)
        rig.managerClock.advance(by: .seconds(3))
        rig.source.send(Self.tenth(680))
        #expect(idle.yieldedCount - idle.droppedCount == 16)
        #expect(idle.yieldedCount == 681 && idle.droppedCount == 681 - 16)
        #expect(rig.gps.health.streamDrops == idle.droppedCount)
    }
}

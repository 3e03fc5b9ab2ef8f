import Foundation
import GPSDLocation
import GPSDSystem
import GPSDTestSupport
import Testing

/// Real-time updates of a replay (paced by the handler, which runs on the replay's thread), and the rule that a
/// handler must not block, which debug builds enforce with a live source only.
@Suite("Real-time updates: replays and the rule against blocking", .timeLimit(.minutes(1)))
struct RealTimeReplayTests {
    private static let drive = Fixtures.directory.deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/WhereAmICore/Resources/drive.gpsd.json")

    /// Every fix of `manager`'s replay, and how it ended, through a real-time handler.
    private func replay(_ manager: LocationManager, into recorder: RealTimeRecorder) async {
        let (ended, end) = AsyncStream.makeStream(of: Void.self)
        let subscription = manager.realTimeUpdates(onEnd: recorder.onEnd { _ in end.finish() }, recorder.handler())
        for await _ in ended {}
        withExtendedLifetime(subscription) {}
    }

    @Test func aReplayAsFastAsPossibleHandsEveryFixToTheHandlerOnItsThread() async throws {
        let recorder = RealTimeRecorder()
        let manager = LocationManager(recording: Self.drive, pace: .asFastAsPossible)
        await replay(manager, into: recorder)
        var expected: [Location] = []
        for try await fix in AsyncLocationManager(recording: Self.drive, pace: .asFastAsPossible).updates() {
            expected.append(fix)
        }
        #expect(expected.count == 174)
        #expect(recorder.fixes == expected, "every fix, in order, none lost")
        #expect(recorder.ends == [nil])
        #expect(Set(recorder.threads).count == 1 && recorder.threadNames == ["replay"], "\(recorder.threadNames)")
        #expect(manager.backpressure?.waitCount == 0, "the handler never held the replay back as a consumer")
    }

    @Test func aReplayWaitsForItsOtherConsumersAsItDidWithoutTheHandler() async throws {
        // A sequence that takes nothing until the replay has waited for it: the handler, no consumer of the
        // backpressure itself, neither hurries the replay past the sequence nor holds it once the sequence takes.
        let recorder = RealTimeRecorder()
        let gps = AsyncLocationManager(recording: Self.drive, pace: .asFastAsPossible)
        let updates = gps.updates()
        let (ended, end) = AsyncStream.makeStream(of: Void.self)
        let subscription = gps.manager.realTimeUpdates(onEnd: recorder.onEnd { _ in end.finish() }, recorder.handler())
        await gps.manager.backpressure?.heldBack()
        #expect(recorder.fixes.count < 174, "held back with the sequence")
        var taken = 0
        for try await _ in updates { taken += 1 }
        for await _ in ended {}
        #expect(taken == 174)
        #expect(recorder.fixes.count == 174)
        #expect(recorder.ends == [nil])
        withExtendedLifetime(subscription) {}
    }

    // MARK: Must not block

    @Test func aHandlerThatBlocksALiveSourceStopsADebugBuild() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let source = ScriptedSource()
            let manager = LocationManager(source: source, clock: ManualManagerClock())
            let subscription = manager.realTimeUpdates { _ in Thread.sleep(forTimeInterval: 0.3) }
            source.send(Location.sample(second: 1))
            withExtendedLifetime(subscription) {}
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("must not block"), "\(message)")
        #expect(message.contains("RealTimeSubscription.handlerTimeLimit"), "\(message)")
    }

    @Test func anOnEndThatBlocksALiveSourceStopsADebugBuild() async {
        await #expect(processExitsWith: .failure) {
            let source = ScriptedSource()
            let manager = LocationManager(source: source, clock: ManualManagerClock())
            manager.reconnectPolicy = .never
            let subscription = manager.realTimeUpdates(onEnd: { _ in Thread.sleep(forTimeInterval: 0.3) }) { _ in }
            source.send(.failed(LocationError(.connectionLost, "gone")))
            withExtendedLifetime(subscription) {}
        }
    }

    @Test func aSlowHandlerOfAReplayOnlySetsItsPace() async {
        await #expect(processExitsWith: .success) {
            let lines = (1...2).map { ReportLines.tpv(second: $0) }.joined(separator: "\n") + "\n"
            let manager = LocationManager(recording: Array(lines.utf8), named: "slow.json", pace: .asFastAsPossible)
            let (ended, end) = AsyncStream.makeStream(of: Void.self)
            let count = Locked(0)
            let subscription = manager.realTimeUpdates(onEnd: { _ in end.finish() }) { _ in
                Thread.sleep(forTimeInterval: 0.15)
                count.withLock { $0 += 1 }
            }
            for await _ in ended {}
            withExtendedLifetime(subscription) {}
            guard count.withLock({ $0 }) == 2 else { exit(3) }
        }
    }
}

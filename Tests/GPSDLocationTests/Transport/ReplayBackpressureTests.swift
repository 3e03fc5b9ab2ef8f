import Dispatch
import Foundation
import GPSDCore
import GPSDLocation
import GPSDTestSupport
import Testing

/// A replay, at any pace, goes no faster than its slowest consumer: it waits while one has the limit or more
/// fixes it has not taken, and so drops none. Waiting for a consumer ends when it takes, leaves or the session
/// closes. The replay runs on its own thread; tests await its holding back (``ReplayBackpressure/heldBack(times:)``),
/// never poll or sleep, and a replay that never holds back, or never goes on, is caught by the time limit.
@Suite("Replay backpressure", .timeLimit(.minutes(2)))
struct ReplayBackpressureTests {
    /// Fixes in the recording: enough for three of the replay's 64 KB reads.
    static let count = 800
    static let fixLines = (0..<count).map { ReportLines.tpv(second: $0) }
    static let recording = Array(([ReportLines.devices] + fixLines).joined(separator: "\n").utf8) + [0x0A]
    /// The most fixes one read can hand on: as many of the shortest line as 64 KB holds, and one cut across its end.
    static let fixesPerRead = 64 * 1024 / (fixLines.map(\.utf8.count).min()! + 1) + 1
    static let reads = (recording.count + 64 * 1024 - 1) / (64 * 1024)

    static let drive = Fixtures.directory.deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/WhereAmICore/Resources/drive.gpsd.json")

    /// A manager replaying ``recording`` as fast as possible, waiting for consumers `limit` fixes behind; its
    /// clock is a manual one, so that no watchdog calls a replay held back stale.
    private func replay(limit: Int = 4, delegateQueue: DispatchQueue? = nil) -> (AsyncLocationManager, ReplayBackpressure) {
        let source = RecordingSource(.contents(Self.recording, name: "paced.gpsd.json"), pace: .asFastAsPossible,
                                     backlogLimit: limit)
        let manager = LocationManager(source: source, clock: ManualManagerClock(), delegateQueue: delegateQueue)
        return (AsyncLocationManager(manager: manager), source.backpressure!)
    }

    /// The end of `manager`'s session by itself (the recording's end), as an observer tells it.
    private func sessionEnd(of manager: LocationManager) -> AsyncStream<Void> {
        let (ended, end) = AsyncStream.makeStream(of: Void.self)
        _ = manager.addObserver { if case .sessionEnded = $0 { end.yield() } }
        return ended
    }

    private static func second(of fix: Location) -> Int {
        Int(fix.timestamp.timeIntervalSince1970 - ReportLines.epoch)
    }

    private static func seconds(of fixes: some AsyncSequence<Location, any Error>) async throws -> [Int] {
        var seconds: [Int] = []
        for try await fix in fixes { seconds.append(second(of: fix)) }
        return seconds
    }

    // MARK: Update streams

    @Test func aConsumerThatStopsTakingHoldsTheReplayBackAndGetsEveryFixOnceItGoesOn() async throws {
        let limit = 4
        let (gps, backpressure) = replay(limit: limit)
        let updates = gps.updates()
        var iterator = updates.makeAsyncIterator()
        var seconds = [Self.second(of: try #require(try await iterator.next()))]

        await backpressure.heldBack()
        // Nothing is taken meanwhile, so it is still waiting, its first wait, and has handed on no more.
        let handedOn = updates.yieldedCount
        #expect(backpressure.isHoldingBack && backpressure.waitCount == 1)
        try #require(Self.reads >= 3, "the recording spans several reads")
        #expect(handedOn < Self.count, "the replay waits before the recording's end")
        #expect(handedOn <= 1 + (limit - 1) + Self.fixesPerRead,
                "ahead of the consumer by less than the limit and one read: \(handedOn)")

        while let fix = try await iterator.next() { seconds.append(Self.second(of: fix)) }
        #expect(seconds == Array(0..<Self.count), "every fix, in order")
        #expect(updates.droppedCount == 0)
    }

    @Test func aStopWhileTheReplayWaitsEndsItAndTheSequenceGetsWhatWasHandedOn() async throws {
        let (gps, backpressure) = replay()
        let updates = gps.updates()
        await backpressure.heldBack()
        await gps.stop()   // returns once the session's thread has ended
        #expect(!backpressure.isHoldingBack)
        let seconds = try await Self.seconds(of: updates)
        #expect(seconds == Array(0..<updates.yieldedCount) && seconds.count < Self.count, "\(seconds.count) fixes")
        #expect(updates.droppedCount == 0)
    }

    @Test func aSequenceLetGoNoLongerHoldsTheReplayBack() async throws {
        let (gps, backpressure) = replay()
        let reader: LocationUpdates
        do {
            let idle = gps.updates()   // first: the replay's first read is handed to it
            reader = gps.updates()
            await backpressure.heldBack()   // by the idle sequence (and the reader, which has not begun)
            #expect(idle.yieldedCount >= 4)
        }   // the idle sequence goes: its termination handler runs
        // Were the replay still waiting for it, the reader would wait for ever once it had taken what it has.
        let seconds = try await Self.seconds(of: reader)
        #expect(seconds == Array((seconds.first ?? 0)..<Self.count), "to the recording's end, in order")
        #expect(reader.droppedCount == 0)
    }

    @Test func aSequenceWhoseIteratorGoesNoLongerHoldsTheReplayBack() async throws {
        let (gps, backpressure) = replay()
        // First: the replay's first read is handed to it. Its own policy, the newest 16: the default would keep all
        // 800, come at one instant of the manual clock.
        let kept = gps.updates(bufferingPolicy: .bufferingNewest(16))
        let reader = gps.updates()
        do {
            var iterator = kept.makeAsyncIterator()
            _ = try await iterator.next()
            await backpressure.heldBack()
        }   // the iterator goes; the sequence is kept, and keeps what a live gpsd's would: the newest 16
        let seconds = try await Self.seconds(of: reader)
        #expect(seconds == Array((seconds.first ?? 0)..<Self.count), "to the recording's end, in order")
        // An iterator made later gets what was buffered before the first went, then the newest 16, to the end.
        let rest = try await Self.seconds(of: kept)
        #expect(rest.suffix(16) == Array(Self.count - 16..<Self.count), "the newest 16: \(rest.suffix(16))")
        #expect(kept.droppedCount > 0 && kept.droppedCount == kept.yieldedCount - 1 - rest.count,
                "every fix handed on is taken, buffered or counted as dropped")
    }

    // MARK: Other consumers

    @Test func aTimelineThatStopsTakingHoldsTheReplayBackAndGetsEveryFix() async throws {
        let (gps, backpressure) = replay()
        let timeline = gps.liveUpdates()
        var iterator = timeline.makeAsyncIterator()
        var updates = [try #require(try await iterator.next())]
        await backpressure.heldBack()
        #expect(timeline.yieldedCount < Self.count)
        while let update = try await iterator.next() { updates.append(update) }
        let fixes = updates.filter(\.isNewFix).compactMap(\.location)
        #expect(fixes.map(Self.second(of:)) == Array(0..<Self.count), "every fix, in order")
        #expect(timeline.droppedCount == 0)
    }

    @Test func aStatusStreamPacesTheReplayAndGetsEveryChange() async throws {
        // The first status is handed on at once: with a limit of 1, nothing more comes until it is taken.
        let (gps, backpressure) = replay(limit: 1)
        let statuses = gps.statusUpdates()
        let updates = gps.updates()
        await backpressure.heldBack()
        #expect(updates.yieldedCount < Self.count)
        let reading = Task { try await Self.seconds(of: updates) }
        var seen: [LocationStatus] = []
        for await status in statuses {
            seen.append(status)
            if seen.count > 1, status == .stopped { break }   // the recording's end ended the fixes' subscription
        }
        #expect(try await reading.value == Array(0..<Self.count))

        // A consumer that takes each change as it comes sees the same.
        let (eager, _) = replay(limit: 1)
        let eagerStream = eager.statusUpdates()
        let eagerStatuses = Task {
            var seen: [LocationStatus] = []
            for await status in eagerStream {
                seen.append(status)
                if seen.count > 1, status == .stopped { break }
            }
            return seen
        }
        for try await _ in eager.updates() {}
        #expect(await eagerStatuses.value == seen)
        #expect(seen.contains { if case .fix = $0 { true } else { false } }, "\(seen)")
    }

    @Test func aDelegateThatIsNotCalledHoldsTheReplayBackUntilItsQueueRuns() async throws {
        let queue = DispatchQueue(label: "delegate")
        queue.suspend()
        let (gps, backpressure) = replay(limit: 4, delegateQueue: queue)
        let delegate = DelegateRecorder()
        let ended = sessionEnd(of: gps.manager)
        gps.manager.delegate = delegate
        gps.manager.startUpdatingLocation()
        await backpressure.heldBack()
        queue.resume()
        for await _ in ended { break }
        queue.sync {}
        #expect(delegate.locations.map(Self.second(of:)) == Array(0..<Self.count))
    }

    @Test func closingTheSessionEndsTheWaitForADelegate() async throws {
        let queue = DispatchQueue(label: "delegate")
        queue.suspend()
        let (gps, backpressure) = replay(limit: 4, delegateQueue: queue)
        let delegate = DelegateRecorder()
        gps.manager.delegate = delegate
        gps.manager.startUpdatingLocation()
        await backpressure.heldBack()
        // The delegate still has its calls to come, so only the session's closing can end the wait; the stop
        // returns once the session's thread has ended.
        gps.manager.stopUpdatingLocation()
        #expect(!backpressure.isHoldingBack)
        queue.resume()
        queue.sync {}
        #expect(delegate.locations.isEmpty, "a stop drops the calls not yet made")
    }

    // MARK: When the replay goes on

    @Test func aBufferAtTheHighWatermarkHoldsTheReplayUntilItIsBackToTheLow() {
        let backpressure = ReplayBackpressure(limit: 16)
        let consumer = backpressure.join()
        consumer.buffered(15)
        #expect(!backpressure.wouldHoldBack)
        consumer.buffered(16)
        #expect(backpressure.wouldHoldBack, "16 not taken: the replay waits")
        consumer.buffered(9)
        #expect(backpressure.wouldHoldBack, "9 not taken: one take does not let it go on for one more event")
        consumer.buffered(8)
        #expect(!backpressure.wouldHoldBack, "8 not taken: half the limit, the replay goes on")
        consumer.buffered(15)
        #expect(!backpressure.wouldHoldBack, "15 not taken")
        consumer.buffered(40)
        #expect(backpressure.wouldHoldBack)
        #expect(backpressure.depth(of: consumer) == 40)
        consumer.leave()
        #expect(!backpressure.wouldHoldBack, "a consumer that leaves holds nothing back")
        #expect(backpressure.depth(of: consumer) == nil)
        consumer.buffered(100)
        #expect(!backpressure.wouldHoldBack, "nor does what it reports after")
    }

    @Test func theReplayWaitsForTheSlowerOfTwoConsumers() {
        let backpressure = ReplayBackpressure(limit: 4)
        let (fast, slow) = (backpressure.join(), backpressure.join())
        fast.buffered(4)
        slow.buffered(4)
        fast.buffered(0)
        #expect(backpressure.wouldHoldBack)
        slow.buffered(2)
        #expect(!backpressure.wouldHoldBack)
    }

    // MARK: The bundled drive

    @Test func theDriveAsFastAsPossibleLosesNoFixToASlowSequence() async throws {
        let manager = LocationManager(recording: Self.drive, pace: .asFastAsPossible)
        let delegate = DelegateRecorder()
        let ended = sessionEnd(of: manager)
        manager.delegate = delegate
        manager.startUpdatingLocation()
        for await _ in ended { break }
        manager.delegateQueue.sync {}

        let gps = AsyncLocationManager(recording: Self.drive, pace: .asFastAsPossible)
        let updates = gps.updates()
        var iterator = updates.makeAsyncIterator()
        var fixes = [try #require(try await iterator.next())]
        await gps.manager.backpressure?.heldBack()   // a consumer slower than the replay
        while let fix = try await iterator.next() { fixes.append(fix) }
        #expect(fixes.count == 174)
        #expect(fixes == delegate.locations)
        #expect(updates.droppedCount == 0)
    }
}

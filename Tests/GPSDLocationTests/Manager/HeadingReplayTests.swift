import Dispatch
import Foundation
@testable import GPSDLocation
import GPSDSystem
import GPSDTestSupport
import Testing

/// Headings from a replay: a heading stream, or the delegate's headings, paces the replay as a stream of fixes
/// does (it waits for them, they drop nothing, one that leaves no longer holds it back), and a stop of headings
/// leaves the fixes alone, and the other way round.
@Suite("Heading replay", .timeLimit(.minutes(2)))
struct HeadingReplayTests {
    /// Epochs in the recording: each a TPV then an ATT a degree on, enough for several of the replay's reads.
    static let count = 600
    static let recording: [UInt8] = {
        let lines = (0..<count).flatMap { second in
            [ReportLines.tpv(second: second),
             #"{"class":"ATT","device":"/dev/ttyUSB0","heading":\#(Double(second % 360)),"pitch":1.5}"#]
        }
        return Array(([ReportLines.devices] + lines).joined(separator: "\n").utf8) + [0x0A]
    }()

    private static func second(of heading: Heading) -> Int {
        Int((heading.timestamp ?? .distantPast).timeIntervalSince1970 - ReportLines.epoch)
    }

    private static func second(of fix: Location) -> Int {
        Int(fix.timestamp.timeIntervalSince1970 - ReportLines.epoch)
    }

    /// A manager replaying ``recording`` as fast as possible, waiting for consumers `limit` behind.
    private func replay(limit: Int = 4, delegateQueue: DispatchQueue? = nil) -> (AsyncLocationManager, ReplayBackpressure) {
        let source = RecordingSource(.contents(Self.recording, name: "headings.gpsd.json"), pace: .asFastAsPossible,
                                     backlogLimit: limit)
        let manager = LocationManager(source: source, clock: ManualManagerClock(), delegateQueue: delegateQueue)
        return (AsyncLocationManager(manager: manager), source.backpressure!)
    }

    private func sessionEnd(of manager: LocationManager) -> AsyncStream<Void> {
        let (ended, end) = AsyncStream.makeStream(of: Void.self)
        _ = manager.addObserver { if case .sessionEnded = $0 { end.yield() } }
        return ended
    }

    /// Replays ``recording`` to a `DelegateRecorder` whose queue waits: `start` starts the delegate's updates, and
    /// once the replay is held back for the queue, `whileHeldBack` runs; then the queue runs until the session ends.
    private func replayToTheDelegate(
        start: (LocationManager) -> Void, whileHeldBack: (LocationManager) -> Void = { _ in }
    ) async -> DelegateRecorder {
        let queue = DispatchQueue(label: "delegate")
        queue.suspend()
        let (gps, backpressure) = replay(delegateQueue: queue)
        let delegate = DelegateRecorder()
        let ended = sessionEnd(of: gps.manager)
        gps.manager.delegate = delegate
        gps.manager.headingFilter = nil
        start(gps.manager)
        await backpressure.heldBack()
        whileHeldBack(gps.manager)
        queue.resume()
        for await _ in ended { break }
        queue.sync {}
        return delegate
    }

    @Test func aHeadingStreamThatStopsTakingHoldsTheReplayBackAndGetsEveryHeading() async throws {
        let (gps, backpressure) = replay()
        let headings = gps.headingUpdates(filter: nil)
        var iterator = headings.makeAsyncIterator()
        var seconds = [Self.second(of: try #require(try await iterator.next()))]
        await backpressure.heldBack()
        #expect(backpressure.isHoldingBack)
        while let heading = try await iterator.next() { seconds.append(Self.second(of: heading)) }
        #expect(seconds == Array(0..<Self.count), "every heading, in order")
        #expect(headings.droppedCount == 0)
    }

    @Test func aHeadingStreamWhoseIteratorGoesNoLongerHoldsTheReplayBack() async throws {
        let (gps, backpressure) = replay()
        let kept = gps.headingUpdates(filter: nil)
        let fixes = gps.updates()
        do {
            var iterator = kept.makeAsyncIterator()
            _ = try await iterator.next()
            await backpressure.heldBack()
        }
        var seconds: [Int] = []
        for try await fix in fixes { seconds.append(Self.second(of: fix)) }
        #expect(seconds == Array((seconds.first ?? 0)..<Self.count))
    }

    @Test func theDelegatesHeadingsHoldTheReplayBackUntilItsQueueRuns() async throws {
        let delegate = await replayToTheDelegate(start: { $0.startUpdatingHeading() })
        #expect(delegate.headings.map(Self.second(of:)) == Array(0..<Self.count))
        #expect(delegate.locations.map(Self.second(of:)) == [])
    }

    @Test func stoppingHeadingsWhileTheReplayWaitsLeavesEveryFixToTheDelegate() async throws {
        let delegate = await replayToTheDelegate(
            start: { $0.startUpdatingLocation(); $0.startUpdatingHeading() }, whileHeldBack: { $0.stopUpdatingHeading() })
        #expect(delegate.locations.map(Self.second(of:)) == Array(0..<Self.count))
        #expect(delegate.headings.map(Self.second(of:)) == [])
    }

    @Test func stoppingFixesWhileTheReplayWaitsLeavesEveryHeadingToTheDelegate() async throws {
        let delegate = await replayToTheDelegate(
            start: { $0.startUpdatingLocation(); $0.startUpdatingHeading() }, whileHeldBack: { $0.stopUpdatingLocation() })
        #expect(delegate.headings.map(Self.second(of:)) == Array(0..<Self.count))
        #expect(delegate.locations.map(Self.second(of:)) == [])
    }

    @Test func stoppingTheOnlyHeadingsWhileTheReplayWaitsEndsTheWait() async throws {
        let queue = DispatchQueue(label: "delegate")
        queue.suspend()
        let (gps, backpressure) = replay(delegateQueue: queue)
        let delegate = DelegateRecorder()
        gps.manager.delegate = delegate
        gps.manager.startUpdatingHeading()
        await backpressure.heldBack()
        gps.manager.stopUpdatingHeading()
        #expect(!backpressure.isHoldingBack)
        queue.resume()
        queue.sync {}
        #expect(delegate.headings.map(Self.second(of:)) == [], "a stop drops the headings not yet delivered")
    }
}

import GPSDCore
@testable import GPSDLocation
import GPSDTestSupport
import Testing

/// What a live gpsd's stream keeps by default (``BacklogBound``): a reader that keeps up gets a whole burst, one
/// that does not holds the newest 16, or what came in the last 2 s, and never more than 1024. The rule as a value,
/// then on a channel timed by a manual clock, its reader taking what it finds buffered.
@Suite("Backlog bound", .timeLimit(.minutes(1)))
struct BacklogBoundTests {
    private typealias Channel = UpdateChannel<Int, any Error>

    // MARK: The rule

    @Test func theNewestSixteenAreKeptWhateverTheirAge() {
        #expect(BacklogBound.default.excess(count: 16, now: .seconds(100)) { _ in .zero } == 0)
        #expect(BacklogBound.default.excess(count: 20, now: .seconds(100)) { _ in .zero } == 4)
    }

    @Test func beyondTheNewestWhatHasWaitedTwoSecondsOrLessIsKept() {
        // 40 elements a tenth of a second apart, the newest at 3.9 s, judged at 4 s: those that came before 2 s go.
        let arrivals = (0..<40).map { Duration.milliseconds(100 * $0) }
        #expect(BacklogBound.default.excess(count: 40, now: .seconds(4)) { arrivals[$0] } == 20)
        // Waited exactly 2 s: kept; a nanosecond more: dropped.
        #expect(BacklogBound.default.excess(count: 17, now: .seconds(2)) { _ in .zero } == 0)
        #expect(BacklogBound.default.excess(count: 17, now: .seconds(2) + .nanoseconds(1)) { _ in .zero } == 1)
    }

    @Test func theCeilingHoldsWhateverTheAge() {
        #expect(BacklogBound.default.excess(count: 1024, now: .zero) { _ in .zero } == 0)
        #expect(BacklogBound.default.excess(count: 5000, now: .zero) { _ in .zero } == 3976)
    }

    @Test func noPolicyMeansTheBoundAndAnExplicitOneWhatItSays() {
        guard case .recent(let bound) = Channel.Limit(nil as AsyncThrowingStream<Int, any Error>.Continuation.BufferingPolicy?) else {
            Issue.record("the default is not the backlog bound")
            return
        }
        #expect(bound == .default && bound.newest == 16 && bound.window == .seconds(2) && bound.ceiling == 1024)
        guard case .newest(16) = Channel.Limit(.bufferingNewest(16) as AsyncThrowingStream<Int, any Error>.Continuation.BufferingPolicy?) else {
            Issue.record("bufferingNewest(16) is not the newest 16")
            return
        }
    }

    // MARK: On a channel

    @Test func aBurstLargerThanSixteenReachesAReaderThatKeepsUp() async throws {
        let (channel, clock) = Self.channel()
        let reader = Task { try await channel.next(isolation: nil).get() }
        await Self.untilWaiting(channel)
        channel.send(0..<200)                          // an 8 s stall's backlog, and more, at once
        #expect(try await reader.value == 0)
        #expect(try await Self.takeBuffered(199, from: channel) == Array(1..<200))
        // Then live, at 10 Hz: it takes each as it comes.
        for element in 200..<300 {
            clock.advance(by: .milliseconds(100))
            channel.send(CollectionOfOne(element))
            #expect(try await Self.takeBuffered(1, from: channel) == [element])
        }
        #expect(channel.droppedCount == 0 && channel.yieldedCount == 300)
    }

    @Test func aReaderThatTakesEachWithinTwoSecondsLosesNoneOfABurst() async throws {
        let (channel, clock) = Self.channel()
        channel.send(0..<100)
        var taken = try await Self.takeBuffered(50, from: channel)
        clock.advance(by: .seconds(1))
        channel.send(CollectionOfOne(100))
        clock.advance(by: .seconds(1))
        channel.send(CollectionOfOne(101))   // the rest of the burst has waited 2 s: kept
        taken += try await Self.takeBuffered(52, from: channel)
        #expect(taken == Array(0..<102))
        #expect(channel.droppedCount == 0)
    }

    @Test func aReaderThatNeverReadsHoldsTheNewestSixteenOrTheLastTwoSeconds() throws {
        let (channel, clock) = Self.channel()
        var most = 0
        // A minute at 10 Hz, nothing taken.
        for element in 0..<600 {
            clock.advance(by: .milliseconds(100))
            channel.send(CollectionOfOne(element))
            most = max(most, channel.bufferedCount)
        }
        // What came in the last 2 s, ends included: 21 at 10 Hz.
        #expect(most == 21 && channel.bufferedCount == 21)
        #expect(channel.droppedCount == 600 - 21 && channel.yieldedCount == 600)
        // At 1 Hz, the newest 16 (older than 2 s, but not beyond 16).
        let (slow, slowClock) = Self.channel()
        for element in 0..<60 {
            slowClock.advance(by: .seconds(1))
            slow.send(CollectionOfOne(element))
        }
        #expect(slow.bufferedCount == 16 && slow.droppedCount == 44)
    }

    @Test func whatIsKeptAreTheNewest() async throws {
        let (channel, clock) = Self.channel()
        channel.send(0..<100)
        clock.advance(by: .seconds(3))
        channel.send([100, 101])
        channel.finish()
        // The burst waited 3 s: of it, what the newest 16 leave room for.
        #expect(try await Self.takeBuffered(16, from: channel) == Array(86..<102))
        #expect(channel.droppedCount == 86)
    }

    @Test func aBurstBeyondTheCeilingKeepsTheNewest1024() async throws {
        let (channel, _) = Self.channel()
        channel.send(0..<5000)
        #expect(channel.bufferedCount == 1024 && channel.droppedCount == 3976)
        #expect(try await Self.takeBuffered(1024, from: channel) == Array(3976..<5000))
    }

    @Test func anExplicitNewestSixteenStillDropsABurst() async throws {
        let (channel, _) = Self.channel(.newest(16))
        channel.send(0..<100)
        #expect(channel.bufferedCount == 16 && channel.droppedCount == 84)
    }

    @Test func aPacedChannelIsNotBounded() async throws {
        let backpressure = ReplayBackpressure(limit: 16)
        let clock = ManualManagerClock()
        let channel = Channel(limit: .recent(.default), pacing: backpressure.join(), clock: clock)
        channel.send(0..<2000)
        clock.advance(by: .seconds(10))
        channel.send(CollectionOfOne(2000))
        #expect(channel.bufferedCount == 2001 && channel.droppedCount == 0)
    }

    // MARK: Helpers

    private static func channel(_ limit: Channel.Limit = .recent(.default)) -> (Channel, ManualManagerClock) {
        let clock = ManualManagerClock()
        return (Channel(limit: limit, clock: clock), clock)
    }

    /// Takes `count` elements the channel holds, never waiting for one.
    private static func takeBuffered(_ count: Int, from channel: Channel) async throws -> [Int] {
        var taken: [Int] = []
        for _ in 0..<count {
            try #require(channel.bufferedCount > 0, "only what is buffered: \(taken.count) of \(count) taken")
            taken.append(try #require(try await channel.next(isolation: nil).get()))
        }
        return taken
    }

    private static func untilWaiting(_ channel: Channel) async {
        while !channel.isWaiting { await Task.yield() }
    }
}

import Foundation
import GPSDCore
@testable import GPSDLocation
import GPSDSystem
import GPSDTestSupport
import Synchronization
import Testing

/// The buffer between the manager's thread and one consumer of `updates()` or `liveUpdates()`: batches come in
/// order, a waiting consumer is resumed once, limits keep and drop what an `AsyncThrowingStream` with the same
/// policy keeps and drops (checked against one), an end or a failure reaches the consumer once, cancellation and
/// letting go run the termination handler once, and a replay's account of what was handed on and taken comes back
/// to zero. A test waits only for what it can observe (the consumer suspended); races run many rounds and check
/// outcomes only.
@Suite("Update channel", .timeLimit(.minutes(1)))
struct UpdateChannelTests {
    /// How often each race is run, each time on a fresh channel.
    private static let rounds = 300

    private struct Failure: Error, Equatable {}

    // MARK: Delivery

    @Test func aBatchIsTakenInOrder() async throws {
        let (channel, ended) = Self.channel()
        channel.send(0..<5)
        channel.send([5, 6])
        #expect(try await Self.takeBuffered(7, from: channel) == Array(0..<7))
        #expect(channel.yieldedCount == 7 && channel.droppedCount == 0 && channel.bufferedCount == 0)
        #expect(ended.count == 0)
    }

    @Test func aWaitingConsumerGetsTheFirstOfABatchAndFindsTheRestBuffered() async throws {
        let (channel, _) = Self.channel()
        let consumer = Task { try await channel.next(isolation: nil).get() }
        await Self.untilWaiting(channel)
        channel.send(1...4)
        #expect(try await consumer.value == 1)
        #expect(!channel.isWaiting && channel.bufferedCount == 3)
        #expect(try await Self.takeBuffered(3, from: channel) == [2, 3, 4])
        #expect(channel.bufferedCount == 0 && channel.suspensionCount == 1, "it suspended once, for the first")
    }

    @Test func aSendThatKeepsNothingLeavesTheConsumerWaiting() async throws {
        let (channel, _) = Self.channel()
        let consumer = Task { try await channel.next(isolation: nil).get() }
        await Self.untilWaiting(channel)
        channel.send(EmptyCollection<Int>())
        channel.send([1, 2], end: nil) { _ in nil }   // a transform that makes nothing of what comes
        #expect(channel.isWaiting && channel.yieldedCount == 0)
        channel.send([7])
        #expect(try await consumer.value == 7)
    }

    @Test func aTransformFoldsEventsInOrderAndLeavesOutWhatItMakesNothingOf() async throws {
        let (channel, _) = Self.channel()
        var folded = 0
        channel.send(1...6, end: nil) { event in
            folded += event
            return event.isMultiple(of: 2) ? folded : nil
        }
        #expect(try await Self.takeBuffered(3, from: channel) == [3, 10, 21])
        #expect(channel.yieldedCount == 3)
    }

    // MARK: Limits, against AsyncThrowingStream

    static let limits: [UpdateChannel<Int, any Error>.Limit] = [
        .unbounded, .newest(0), .newest(1), .newest(3), .oldest(0), .oldest(1), .oldest(3),
    ]

    @Test(arguments: limits)
    func aConsumerThatIsNotWaitingGetsWhatTheStreamWouldKeep(limit: UpdateChannel<Int, any Error>.Limit) async throws {
        var reference = Reference(limit)
        reference.yield(1...6)
        reference.finish()
        let (channel, _) = Self.channel(limit)
        channel.send(1...6)
        channel.finish()
        #expect(try await Self.drain(channel) == (try await reference.drain()))
        #expect(channel.droppedCount == reference.dropped)
        #expect(channel.yieldedCount == 6)
    }

    @Test(arguments: limits)
    func aWaitingConsumerGetsTheFirstWhateverTheLimitThenWhatTheStreamWouldKeep(
        limit: UpdateChannel<Int, any Error>.Limit
    ) async throws {
        // A stream's waiting consumer takes the first element yielded, even with a buffer of 0; the rest is
        // yielded to a stream whose consumer is not waiting.
        var reference = Reference(limit)
        reference.yield(2...6)
        reference.finish()
        let expected = [1] + (try await reference.drain())

        let (channel, _) = Self.channel(limit)
        let consumer = Task { try await Self.drain(channel) }
        await Self.untilWaiting(channel)
        channel.send(1...6)
        channel.finish()
        #expect(try await consumer.value == expected)
        #expect(channel.droppedCount == reference.dropped)
        #expect(channel.yieldedCount == 6)
    }

    static let longRunLimits: [UpdateChannel<Int, any Error>.Limit] = [.unbounded, .newest(16), .newest(100), .oldest(100)]

    /// 10,000 elements in batches of varying size (empty ones too), the consumer taking a varying number between
    /// them: first falling behind by hundreds, then catching up, so that the taken part of the buffer is dropped
    /// both when it empties and while elements are still behind it.
    @Test(arguments: longRunLimits)
    func aLongRunWithTheConsumerBehindMatchesTheStream(limit: UpdateChannel<Int, any Error>.Limit) async throws {
        var random = SplitMix64(seed: 0x5EED_CAFE)
        var reference = Reference(limit)
        let (channel, _) = Self.channel(limit)
        var (sent, round) = (0, 0)
        var (taken, expected): ([Int], [Int]) = ([], [])
        while sent < 10_000 {
            let size = min(Int(random.next() % 97), 10_000 - sent)
            reference.yield(sent..<sent + size)
            channel.send(sent..<sent + size)
            sent += size
            try #require(channel.bufferedCount == reference.buffered, "round \(round): as many kept as the stream")
            let most = (round / 40).isMultiple(of: 2) ? 30 : 150
            let count = min(Int(random.next() % UInt64(most)), reference.buffered)
            expected += try await reference.take(count)
            taken += try await Self.takeBuffered(count, from: channel)
            round += 1
        }
        reference.finish()
        channel.finish()
        expected += try await reference.drain()
        taken += try await Self.drain(channel)
        #expect(taken == expected)
        #expect(channel.droppedCount == reference.dropped && channel.yieldedCount == 10_000)
        if case .unbounded = limit { #expect(taken == Array(0..<10_000)) }
    }

    // MARK: The end

    @Test func aFinishAfterElementsDeliversThemThenNil() async throws {
        let (channel, ended) = Self.channel()
        channel.send([1, 2])
        channel.finish()
        #expect(await ended.count(reaching: 1) == 1, "the handler runs when the channel ends, not when it is drained")
        #expect(try await Self.takeBuffered(2, from: channel) == [1, 2])
        #expect(try await channel.next(isolation: nil).get() == nil)
        #expect(try await channel.next(isolation: nil).get() == nil)
        #expect(await ended.count(reaching: 1) == 1)
    }

    @Test func aFailureComesAfterTheElementsOnceThenNil() async throws {
        let (channel, ended) = Self.channel()
        channel.send([1, 2], end: .failure(Failure()))
        #expect(try await Self.takeBuffered(2, from: channel) == [1, 2])
        await #expect(throws: Failure.self) { try await channel.next(isolation: nil).get() }
        #expect(try await channel.next(isolation: nil).get() == nil)
        #expect(try await channel.next(isolation: nil).get() == nil)
        #expect(await ended.count(reaching: 1) == 1)
    }

    @Test func aFailureReachesTheWaitingConsumerOnceThenNil() async throws {
        let (channel, ended) = Self.channel()
        let consumer = Task { try await channel.next(isolation: nil).get() }
        await Self.untilWaiting(channel)
        channel.send(EmptyCollection<Int>(), end: .failure(Failure()))
        await #expect(throws: Failure.self) { try await consumer.value }
        #expect(try await channel.next(isolation: nil).get() == nil)
        #expect(await ended.count(reaching: 1) == 1)
    }

    @Test func aBatchWithAnEndResumesTheWaitingConsumerWithItsFirstAndKeepsTheRest() async throws {
        let (channel, ended) = Self.channel()
        let consumer = Task { try await channel.next(isolation: nil).get() }
        await Self.untilWaiting(channel)
        channel.send([1, 2, 3], end: .failure(Failure()))
        #expect(try await consumer.value == 1)
        #expect(await ended.count(reaching: 1) == 1)
        #expect(try await Self.takeBuffered(2, from: channel) == [2, 3])
        await #expect(throws: Failure.self) { try await channel.next(isolation: nil).get() }
        #expect(try await channel.next(isolation: nil).get() == nil)
    }

    @Test func whatComesAfterTheEndIsIgnored() async throws {
        let (channel, ended) = Self.channel()
        channel.send([1])
        channel.finish()
        channel.send([2, 3])
        channel.send([4], end: .failure(Failure()))
        channel.finish()
        #expect(channel.yieldedCount == 1 && channel.droppedCount == 0)
        #expect(try await Self.drain(channel) == [1], "no failure either: the first end stands")
        #expect(await ended.count(reaching: 1) == 1)
    }

    @Test func theHandlerIsLetGoOnceItHasRun() {
        // The manager's handler holds the manager, which holds the channel: the cycle ends when it has run.
        final class Held: Sendable {}
        weak var held: Held?
        let channel = UpdateChannel<Int, any Error>(limit: .unbounded)
        do {
            let object = Held()
            held = object
            channel.onTermination { withExtendedLifetime(object) {} }
        }
        #expect(held != nil)
        channel.finish()
        #expect(held == nil)
    }

    @Test func theHandlerMayUseTheChannel() async throws {
        // It runs outside the channel's lock: were it inside, these calls would wait for ever for the lock.
        let channel = UpdateChannel<Int, any Error>(limit: .unbounded)
        let seen = Locked<[Int]>([])
        channel.onTermination {
            channel.send([9])
            seen.withLock { $0 = [channel.yieldedCount, channel.droppedCount] }
        }
        channel.send([1])
        channel.finish()
        #expect(seen.withLock { $0 } == [1, 0])
        #expect(try await Self.drain(channel) == [1])
    }

    // MARK: Cancellation

    @Test func cancellingTheWaitingTaskReturnsNilAndRunsTheHandlerOnce() async throws {
        let (channel, ended) = Self.channel()
        let consumer = Task { try await channel.next(isolation: nil).get() }
        await Self.untilWaiting(channel)
        consumer.cancel()
        #expect(try await consumer.value == nil)
        #expect(await ended.count(reaching: 1) == 1)
        channel.send([1])
        channel.finish()
        #expect(channel.yieldedCount == 0, "an ended channel takes nothing")
        #expect(try await channel.next(isolation: nil).get() == nil)
        #expect(await ended.count(reaching: 1) == 1)
    }

    @Test func aTaskCancelledBeforeItAsksEndsTheChannelAndGetsWhatWasBuffered() async throws {
        // What a stream does: the first next() of a cancelled task ends it, what is buffered still comes.
        let (channel, ended) = Self.channel()
        channel.send(1...3)
        let consumer = Task {
            var reference = Reference(.unbounded)
            reference.yield(1...3)
            withUnsafeCurrentTask { $0?.cancel() }
            var got = [try #require(try await channel.next(isolation: nil).get())]
            var expected = try await reference.take(1)
            channel.send([4])
            reference.yield([4])
            got += try await Self.drain(channel)
            expected += try await reference.drain()
            return (got, expected, ended.count)
        }
        let (got, expected, endedAfterFirst) = try await consumer.value
        #expect(got == expected && got == [1, 2, 3])
        #expect(endedAfterFirst == 1, "the handler ran before the consumer went on")
        #expect(channel.yieldedCount == 3)
    }

    @Test func aConsumerCancelledAsABatchResumesItGetsTheWholeBatch() async throws {
        let (channel, ended) = Self.channel()
        let consumer = Task { try await Self.drain(channel) }
        await Self.untilWaiting(channel)
        channel.send([1, 2, 3])   // resumes it with the first, the rest buffered
        consumer.cancel()         // before or after it has gone on: it ends the channel, and keeps the rest
        #expect(try await consumer.value == [1, 2, 3])
        #expect(await ended.count(reaching: 1) == 1)
    }

    @Test func aBatchAndACancelAtOnceGiveTheWholeBatchOrNothing() async throws {
        for round in 0..<Self.rounds {
            let (channel, ended) = Self.channel()
            let consumer = Task { try await Self.drain(channel) }
            await Self.untilWaiting(channel)
            await Self.simultaneously(swap: round.isMultiple(of: 2), { channel.send([1, 2, 3]) }, { consumer.cancel() })
            let got = try await consumer.value
            #expect(got == [] || got == [1, 2, 3], "round \(round): \(got)")
            #expect(await ended.count(reaching: 1) == 1, "round \(round)")
        }
    }

    @Test func aCancelAndAFailureAtOnceEndTheConsumerOnce() async throws {
        for round in 0..<Self.rounds {
            let (channel, ended) = Self.channel()
            let consumer = Task { try await channel.next(isolation: nil).get() }
            await Self.untilWaiting(channel)
            await Self.simultaneously(
                swap: round.isMultiple(of: 2), { channel.send(EmptyCollection<Int>(), end: .failure(Failure())) },
                { consumer.cancel() })
            // Whichever came first: the failure, or the end of the cancelled iteration.
            switch await consumer.result {
            case .success(let element): #expect(element == nil, "round \(round)")
            case .failure(let error): #expect(error is Failure, "round \(round)")
            }
            #expect(await ended.count(reaching: 1) == 1, "round \(round)")
            #expect(try await channel.next(isolation: nil).get() == nil)
        }
    }

    @Test func twoTasksWaitingAtOnceIsATrap() async {
        // An AsyncThrowingStream traps too; a second continuation kept in place of the first would leave the
        // first task waiting for ever.
        await #expect(processExitsWith: .failure) {
            let channel = UpdateChannel<Int, any Error>(limit: .unbounded)
            let first = Task { try await channel.next(isolation: nil).get() }
            await UpdateChannelTests.untilWaiting(channel)
            let second = Task { try await channel.next(isolation: nil).get() }
            while channel.suspensionCount < 2 { await Task.yield() }
            // Not trapped: the second waits in place of the first.
            withExtendedLifetime((first, second)) { exit(EXIT_SUCCESS) }
        }
    }

    // MARK: Letting go

    @Test func lettingGoOfTheSequenceAndItsIteratorsRunsTheHandler() async throws {
        let channel = UpdateChannel<Location, any Error>(limit: .unbounded)
        let ended = Runs()
        channel.onTermination { ended.record() }
        do {
            let updates = LocationUpdates(channel)
            var iterator = updates.makeAsyncIterator()
            channel.send([.sample(second: 1), .sample(second: 2)])
            #expect(try await iterator.next() == .sample(second: 1))
            withExtendedLifetime((updates, iterator)) { #expect(ended.count == 0) }
        }
        #expect(await ended.count(reaching: 1) == 1)
        channel.send([.sample(second: 3)])
        #expect(channel.yieldedCount == 2 && channel.bufferedCount == 0, "what it held is dropped, nothing more kept")
    }

    @Test func anIteratorKeepsTheChannelAfterTheSequenceGoes() async throws {
        let channel = UpdateChannel<LocationUpdate, any Error>(limit: .unbounded)
        let ended = Runs()
        channel.onTermination { ended.record() }
        var iterator: LiveUpdates.AsyncIterator? = LiveUpdates(channel).makeAsyncIterator()
        #expect(ended.count == 0)
        channel.send([LocationUpdate(
            location: .sample(second: 1), isNewFix: true, status: .stopped, locationUnavailable: false,
            isStale: false, isStationary: false, sourceRestarted: false, rejection: nil)])
        #expect(try await iterator?.next()?.location == .sample(second: 1))
        iterator = nil
        #expect(await ended.count(reaching: 1) == 1)
    }

    @Test func lettingGoWhileABatchComesRunsTheHandlerOnce() async {
        for round in 0..<Self.rounds {
            let (channel, ended) = Self.channel()
            let sequence = Locked<ChannelReference<Int, any Error>?>(ChannelReference(channel))
            await Self.simultaneously(
                swap: round.isMultiple(of: 2), { channel.send([1, 2, 3]) },
                { _ = sequence.withLock { $0.take() } })   // the last reference goes after the lock
            #expect(await ended.count(reaching: 1) == 1, "round \(round)")
            #expect(channel.bufferedCount == 0, "round \(round): nobody can take it")
        }
    }

    // MARK: A replay's account

    @Test func aPacedChannelKeepsEverythingAndTellsTheReplayItsDepth() async throws {
        let pacing = Pacing()
        let (channel, _) = Self.channel(.newest(2), pacing: pacing.consumer)
        channel.send(1...5)
        #expect(channel.bufferedCount == 5 && channel.droppedCount == 0, "a replay waits instead of dropping")
        #expect(pacing.backlog(is: 5))
        #expect(try await Self.takeBuffered(2, from: channel) == [1, 2])
        #expect(pacing.backlog(is: 3))
        #expect(try await Self.takeBuffered(3, from: channel) == [3, 4, 5])
        #expect(pacing.backlog(is: 0))

        // A waiting consumer's element never joins the buffer.
        let consumer = Task { try await channel.next(isolation: nil).get() }
        await Self.untilWaiting(channel)
        channel.send([6, 7])
        #expect(try await consumer.value == 6)
        #expect(pacing.backlog(is: 1))
        #expect(try await channel.next(isolation: nil).get() == 7)
        #expect(pacing.backlog(is: 0))
    }

    @Test func aPacedChannelThatEndsLeavesTheReplay() async throws {
        let pacing = Pacing()
        let (channel, _) = Self.channel(pacing: pacing.consumer)
        channel.send([1, 2, 3])
        #expect(pacing.backlog(is: 3))
        channel.finish()
        #expect(pacing.hasLeft(), "the elements still buffered no longer hold the replay back")
        #expect(try await Self.drain(channel) == [1, 2, 3])
    }

    @Test func aCancelledConsumerLeavesTheReplay() async throws {
        let pacing = Pacing()
        let (channel, ended) = Self.channel(pacing: pacing.consumer)
        let consumer = Task { try await channel.next(isolation: nil).get() }
        await Self.untilWaiting(channel)
        consumer.cancel()
        #expect(try await consumer.value == nil)
        #expect(await ended.count(reaching: 1) == 1)
        #expect(pacing.hasLeft())
    }

    @Test func anIteratorThatGoesLeavesTheReplayAndTheSequenceStillBuffers() async throws {
        let pacing = Pacing()
        let (channel, ended) = Self.channel(pacing: pacing.consumer)
        let sequence = ChannelReference(channel)
        do {
            let iteration = ChannelIteration(sequence)
            channel.send([1, 2])
            #expect(try await iteration.reference.channel.next(isolation: nil).get() == 1)
            #expect(pacing.backlog(is: 1))
        }
        #expect(pacing.hasLeft())
        #expect(ended.count == 0)
        channel.send([3])
        #expect(channel.bufferedCount == 2)
        withExtendedLifetime(sequence) {}
    }

    /// A producer on a thread of its own hands 10,000 elements on in batches while a task takes them: every one
    /// comes once, in order, and the channel's last depth told is zero, so a replay would never stall.
    @Test func aProducerAndAConsumerAtOnceKeepOrderAndEndWithAnEmptyBuffer() async throws {
        let pacing = Pacing()
        let (channel, _) = Self.channel(pacing: pacing.consumer)
        let consumer = Task { try await Self.take(10_000, from: channel) }
        await onThread {
            var random = SplitMix64(seed: 42)
            var sent = 0
            while sent < 10_000 {
                let size = min(1 + Int(random.next() % 64), 10_000 - sent)
                channel.send(sent..<sent + size)
                sent += size
            }
        }
        #expect(try await consumer.value == Array(0..<10_000))
        #expect(pacing.backlog(is: 0))
        channel.finish()
        #expect(try await channel.next(isolation: nil).get() == nil)
    }

    /// The consumer may be waiting or not as each batch comes: either way it gets them all, in order, then the
    /// failure once.
    @Test func batchesAndAFailureRacingTheConsumerReachItInOrder() async throws {
        for round in 0..<Self.rounds {
            let (channel, ended) = Self.channel()
            let count = round % 7
            let consumer = Task { () -> ([Int], Bool) in
                var got: [Int] = []
                do {
                    while let element = try await channel.next(isolation: nil).get() { got.append(element) }
                    return (got, false)
                } catch {
                    return (got, error is Failure)
                }
            }
            let producer = Task {
                for _ in 0..<round % 3 { await Task.yield() }   // a jitter, so it comes before and after the wait
                channel.send(0..<count)
                channel.send([count, count + 1], end: .failure(Failure()))
            }
            await producer.value
            let (got, failed) = await consumer.value
            #expect(got == Array(0..<count + 2) && failed, "round \(round)")
            #expect(try await channel.next(isolation: nil).get() == nil)
            #expect(await ended.count(reaching: 1) == 1)
        }
    }

    // MARK: Helpers

    /// A channel whose termination handler counts its runs and, as the manager's does, leaves the replay.
    private static func channel(
        _ limit: UpdateChannel<Int, any Error>.Limit = .unbounded, pacing: PacedConsumer? = nil
    ) -> (UpdateChannel<Int, any Error>, Runs) {
        let channel = UpdateChannel<Int, any Error>(limit: limit, pacing: pacing)
        let ended = Runs()
        channel.onTermination {
            pacing?.leave()
            ended.record()
        }
        return (channel, ended)
    }

    /// The next `count` elements, waiting for them as they come; fails if the channel ends before.
    private static func take(_ count: Int, from channel: UpdateChannel<Int, any Error>) async throws -> [Int] {
        var taken: [Int] = []
        for _ in 0..<count { taken.append(try #require(try await channel.next(isolation: nil).get())) }
        return taken
    }

    /// The next `count` elements, each of them buffered already: fails rather than wait for one.
    private static func takeBuffered(_ count: Int, from channel: UpdateChannel<Int, any Error>) async throws -> [Int] {
        var taken: [Int] = []
        for _ in 0..<count {
            try #require(channel.bufferedCount > 0, "\(taken.count) of \(count) were buffered")
            taken.append(try #require(try await channel.next(isolation: nil).get()))
        }
        return taken
    }

    /// Every element to the end.
    private static func drain(_ channel: UpdateChannel<Int, any Error>) async throws -> [Int] {
        var taken: [Int] = []
        while let element = try await channel.next(isolation: nil).get() { taken.append(element) }
        return taken
    }

    /// Returns once the consumer of `channel` is suspended in `next()`.
    private static func untilWaiting<Element>(_ channel: UpdateChannel<Element, any Error>) async {
        while !channel.isWaiting { await Task.yield() }
    }

    /// Runs both at the same time on the global pool; `swap` changes which is enqueued first.
    private static func simultaneously(
        swap: Bool, _ first: @escaping @Sendable () -> Void, _ second: @escaping @Sendable () -> Void
    ) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask(operation: swap ? second : first)
            group.addTask(operation: swap ? first : second)
        }
    }
}

/// How often a termination handler ran.
private final class Runs: Sendable {
    private let state = Locked<(runs: Int, waiters: [(Int, CheckedContinuation<Void, Never>)])>((0, []))

    var count: Int { state.withLock { $0.runs } }

    func record() {
        let ready = state.withLock { state in
            state.runs += 1
            let runs = state.runs
            defer { state.waiters.removeAll { $0.0 <= runs } }
            return state.waiters.filter { $0.0 <= runs }.map(\.1)
        }
        for waiter in ready { waiter.resume() }
    }

    /// The count once it has reached `runs`: a cancelled consumer's handler runs on a thread of its own (a
    /// cancellation handler must not block), so it may come just after the consumer has ended.
    func count(reaching runs: Int) async -> Int {
        await withCheckedContinuation { continuation in
            let reached = state.withLock { state in
                if state.runs >= runs { return true }
                state.waiters.append((runs, continuation))
                return false
            }
            if reached { continuation.resume() }
        }
        return count
    }
}

/// What an `AsyncThrowingStream` with a limit's policy does with the same calls, its consumer never waiting
/// (it takes only what is buffered): the reference the channel is held to.
private struct Reference {
    private let continuation: AsyncThrowingStream<Int, any Error>.Continuation
    private var iterator: AsyncThrowingStream<Int, any Error>.AsyncIterator
    /// How many the stream holds, from what its yields said.
    private(set) var buffered = 0
    private(set) var dropped = 0

    init(_ limit: UpdateChannel<Int, any Error>.Limit) {
        let policy: AsyncThrowingStream<Int, any Error>.Continuation.BufferingPolicy =
            switch limit {
            case .unbounded: .unbounded
            case .newest(let count): .bufferingNewest(count)
            case .oldest(let count): .bufferingOldest(count)
            case .recent: preconditionFailure("no AsyncThrowingStream policy keeps what .recent keeps")
            }
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: Int.self, bufferingPolicy: policy)
        self.continuation = continuation
        iterator = stream.makeAsyncIterator()
    }

    mutating func yield(_ elements: some Sequence<Int>) {
        for element in elements {
            switch continuation.yield(element) {
            case .enqueued: buffered += 1
            case .dropped: dropped += 1   // the newest policy drops one held and keeps this one: as many held
            case .terminated: break
            @unknown default: break
            }
        }
    }

    func finish() { continuation.finish() }

    mutating func take(_ count: Int) async throws -> [Int] {
        try #require(count <= buffered, "the reference's consumer takes only what is buffered")
        var taken: [Int] = []
        for _ in 0..<count { taken.append(try #require(try await iterator.next())) }
        buffered -= count
        return taken
    }

    /// What is left, once the stream has been finished.
    mutating func drain() async throws -> [Int] {
        var taken: [Int] = []
        while let element = try await iterator.next() { taken.append(element) }
        buffered = 0
        return taken
    }
}

/// A replay's account with one consumer, as the replay's thread sees it (``ReplayBackpressure/wouldHoldBack``).
/// With a limit of 1 the replay holds back while the backlog is 1 or more (it goes on again at 0), so moving the
/// backlog by hand before asking tells its exact value.
private final class Pacing: Sendable {
    let backpressure = ReplayBackpressure(limit: 1)
    let consumer: PacedConsumer

    init() { consumer = backpressure.join() }

    /// Whether the channel last told the replay its depth was `count`.
    func backlog(is count: Int) -> Bool { backpressure.depth(of: consumer) == count }

    /// Whether the consumer has left: the replay does not wait for it, whatever it holds.
    func hasLeft() -> Bool { backpressure.depth(of: consumer) == nil }
}

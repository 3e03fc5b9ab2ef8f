import Foundation
import GPSDLocation
import GPSDTestSupport
import Testing

/// `AsyncLocationManager.updates`: filters per consumer, buffering, every way a sequence ends, and the one
/// shared watch. `updates()` holds the watch as soon as it returns, so events sent after it are buffered for
/// the consumer deterministically.
@Suite("Async updates", .timeLimit(.minutes(1)))
struct AsyncUpdatesTests {
    private let connectionLost = LocationError(.connectionLost, "connection to gpsd at localhost:2947 lost")

    private func collect(_ updates: LocationUpdates) async throws -> [Location] {
        var received: [Location] = []
        for try await fix in updates { received.append(fix) }
        return received
    }

    // MARK: The watch

    @Test func aConsumerThatBreaksOutStopsTheWatch() async throws {
        let rig = AsyncRig()
        let gps = rig.gps
        let consumer = Task {
            var received: [Location] = []
            for try await fix in gps.updates() {
                received.append(fix)
                if received.count == 3 { break }
            }
            return received
        }
        await rig.source.waitForOpening()
        let fixes = (1...5).map { Location.sample(second: $0) }
        for fix in fixes { rig.source.send(fix) }

        // The consumer's task owned the sequence and its iterator; both are gone once the task has ended,
        // and dropping them ran the termination handler, which gave the subscription back: the session is closed
        // on a thread of its own, maybe just after the task has ended.
        #expect(try await consumer.value == Array(fixes.prefix(3)))
        await rig.source.waitUntilIdle()
        #expect(!rig.source.isRunning)
        #expect(rig.source.closeCount == 1)
    }

    @Test func cancellingTheConsumersTaskEndsTheSequenceAndStopsTheWatch() async throws {
        let rig = AsyncRig()
        let gps = rig.gps
        let (progress, reached) = AsyncStream.makeStream(of: Location.self)
        let consumer = Task {
            var count = 0
            for try await fix in gps.updates() {
                count += 1
                reached.yield(fix)
            }
            return count
        }
        await rig.source.waitForOpening()
        let fix = Location.sample(second: 1)
        rig.source.send(fix)
        var reachedFixes = progress.makeAsyncIterator()
        #expect(await reachedFixes.next() == fix, "the consumer is iterating")

        consumer.cancel()

        #expect(try await consumer.value == 1, "the sequence ends without an error")
        // The subscription is given back on a thread of its own (a cancellation handler must not block): the
        // watch stops, just after the sequence may have ended.
        await rig.source.waitUntilIdle()
        #expect(!rig.source.isRunning)
        #expect(!rig.source.send(.sample(second: 2)))
    }

    @Test func stopEndsEverySequenceNormallyAndStopsTheWatch() async throws {
        let rig = AsyncRig()
        let first = rig.gps.updates()
        let second = rig.gps.updates(desiredAccuracy: 10)
        let fix = Location.sample(second: 1)
        rig.source.send(fix)

        await rig.gps.stop()

        #expect(!rig.source.isRunning)
        #expect(rig.source.closeCount == 1)
        #expect(try await collect(first) == [fix], "what was buffered is still delivered, then the end")
        #expect(try await collect(second) == [fix])
    }

    @Test func aFailureEndsTheSequenceWithTheLocationError() async throws {
        let rig = AsyncRig()
        let updates = rig.gps.updates()
        let fixes = (1...2).map { Location.sample(second: $0) }
        for fix in fixes { rig.source.send(fix) }

        rig.source.send(.failed(connectionLost))

        var received: [Location] = []
        let error = await #expect(throws: LocationError.self) {
            for try await fix in updates { received.append(fix) }
        }
        #expect(error == connectionLost)
        #expect(received == fixes)
        // The failed sequence released the watch: a new consumer starts a new one and holds it alone.
        let next = rig.gps.updates()
        #expect(rig.source.openCount == 2)
        await rig.gps.stop()
        #expect(!rig.source.isRunning)
        #expect(try await collect(next) == [])
    }

    @Test func theEndOfARecordingEndsTheSequenceNormally() async throws {
        let rig = AsyncRig()
        let updates = rig.gps.updates()
        let fixes = (1...3).map { Location.sample(second: $0) }
        for fix in fixes { rig.source.send(fix) }

        rig.source.send(.finished)

        #expect(try await collect(updates) == fixes)
        let next = rig.gps.updates()
        #expect(rig.source.openCount == 2, "the ended sequence released the watch")
        await rig.gps.stop()
        #expect(!rig.source.isRunning)
        #expect(try await collect(next) == [])
    }

    @Test func streamsAndRequestsShareOneWatch() async throws {
        let rig = AsyncRig()
        let updates = rig.gps.updates()
        let requests = [rig.request(), rig.request(desiredAccuracy: 10)]
        await rig.clock.waitForSleepers(2)
        let also = rig.gps.updates(distanceFilter: 5)
        #expect(rig.source.openCount == 1)

        let fix = Location.sample(second: 1, accuracy: 4)
        rig.source.send(fix)
        for request in requests { #expect(await request.value == .fix(fix)) }
        #expect(rig.source.isRunning, "the streams still hold the watch")

        await rig.gps.stop()
        #expect(!rig.source.isRunning)
        #expect(rig.source.openCount == 1)
        #expect(rig.source.closeCount == 1)
        #expect(try await collect(updates) == [fix])
        #expect(try await collect(also) == [fix])
    }

    @Test func theWatchRunsUntilTheLastOfSeveralConsumersLeaves() async throws {
        let rig = AsyncRig()
        let gps = rig.gps
        // The sequences are made here, so all three are subscribed before the first fix is sent; each
        // consumer task then reads its own.
        let consumers = (1...3).map { count in
            let updates = gps.updates()
            return Task {
                var received = 0
                for try await _ in updates {
                    received += 1
                    if received == count { break }
                }
                return received
            }
        }
        await rig.source.waitForOpening()
        for second in 1...3 { rig.source.send(.sample(second: second)) }
        for (index, consumer) in consumers.enumerated() { #expect(try await consumer.value == index + 1) }
        // The last to leave gave the watch back; its session is closed on a thread of its own.
        await rig.source.waitUntilIdle()
        #expect(rig.source.openCount == 1)
        #expect(rig.source.closeCount == 1)
        #expect(!rig.source.isRunning)
    }

    // MARK: Filters

    @Test func consumersWithAndWithoutADistanceFilterEachGetWhatTheirFilterAllows() async throws {
        let rig = AsyncRig()
        let filtered = rig.gps.updates(distanceFilter: 100)
        let everything = rig.gps.updates()
        #expect(rig.source.openCount == 1)
        // 30 m apart along the equator: 0, 30, 60, … 270 m.
        let fixes = (0..<10).map { Location.sample(second: $0, metresPerSecond: 30) }
        for fix in fixes { rig.source.send(fix) }
        await rig.gps.stop()

        #expect(try await collect(filtered) == [fixes[0], fixes[4], fixes[8]], "each ≥ 100 m from the last delivered")
        #expect(try await collect(everything) == fixes)
    }

    @Test func consumersWithAndWithoutADesiredAccuracyEachGetWhatTheirFilterAllows() async throws {
        let rig = AsyncRig()
        let accurate = rig.gps.updates(desiredAccuracy: 10)
        let everything = rig.gps.updates()
        let fixes = [5, 20, nil, 10, 3].enumerated().map { Location.sample(second: $0, accuracy: $1) }
        for fix in fixes { rig.source.send(fix) }
        await rig.gps.stop()

        #expect(try await collect(accurate) == [fixes[0], fixes[3], fixes[4]])
        #expect(try await collect(everything) == fixes)
    }

    @Test func polledFixesAreNotStreamedButServeRequests() async throws {
        let rig = AsyncRig()
        let updates = rig.gps.updates()
        let request = rig.request(maximumAge: .seconds(5))
        await rig.clock.waitForSleepers(1)
        let polled = Location.sample(second: 1)
        rig.source.send(.report(.poll(time: polled.timestamp.addingTimeInterval(2), reports: [.fix(polled)])))
        #expect(await request.value == .fix(polled))
        let live = Location.sample(second: 4)
        rig.source.send(live)
        await rig.gps.stop()
        #expect(try await collect(updates) == [live])
    }

    // MARK: Buffering

    @Test func aConsumerThatNeverReadsKeepsOnlyTheNewestItsPolicyAllows() async throws {
        let rig = AsyncRig()
        let updates = rig.gps.updates(bufferingPolicy: .bufferingNewest(4))
        let fixes = (0..<1_000).map { Location.sample(second: $0) }
        for fix in fixes { rig.source.send(fix) }

        var iterator = updates.makeAsyncIterator()
        var received: [Location] = []
        for _ in 0..<4 { received.append(try #require(try await iterator.next())) }
        await rig.gps.stop()

        #expect(received == Array(fixes.suffix(4)))
        #expect(try await iterator.next() == nil, "nothing more was buffered")
    }

    @Test func bufferingOldestKeepsTheFirstFixes() async throws {
        let rig = AsyncRig()
        let updates = rig.gps.updates(bufferingPolicy: .bufferingOldest(4))
        let fixes = (0..<1_000).map { Location.sample(second: $0) }
        for fix in fixes { rig.source.send(fix) }
        await rig.gps.stop()

        #expect(try await collect(updates) == Array(fixes.prefix(4)))
    }

    /// The newest 16, and beyond them what has waited 2 s or less by the manager's clock (``StreamBacklogTests``
    /// has the bursts).
    @Test func theDefaultPolicyKeepsWhatHasWaitedTwoSecondsOrLessBeyondTheNewestSixteen() async throws {
        let rig = AsyncRig()
        let updates = rig.gps.updates()
        let fixes = (0..<100).map { Location.sample(second: $0) }
        for fix in fixes.prefix(50) { rig.source.send(fix) }
        rig.managerClock.advance(by: .seconds(3))
        for fix in fixes.suffix(50) { rig.source.send(fix) }
        await rig.gps.stop()

        #expect(try await collect(updates) == Array(fixes.suffix(50)))
        #expect(updates.droppedCount == 50)
    }

    // MARK: Events while a sequence registers

    // The hook runs inside the source's `start`, that is inside `updates()`, as the consumer subscribes (its
    // termination handler is already installed).

    @Test func stopWhileASequenceRegistersEndsItAndReleasesTheWatch() async throws {
        let rig = AsyncRig()
        let gps = rig.gps
        rig.source.onNextOpening(.afterOpening) { gps.stopBlocking() }
        let updates = rig.gps.updates()
        defer { withExtendedLifetime(updates) {} }  // the consumer still holds the ended sequence

        #expect(try await collect(updates) == [], "stop() ended the sequence")
        #expect(
            !rig.source.isRunning,
            "the sequence has ended, but its termination handler was installed after it finished")
    }

    @Test func aFailureWhileASequenceRegistersEndsItAndReleasesTheWatch() async throws {
        let rig = AsyncRig()
        let (source, failure) = (rig.source, SourceEvent.failed(connectionLost))
        rig.source.onNextOpening(.afterOpening) { source.send(failure) }
        let updates = rig.gps.updates()
        defer { withExtendedLifetime(updates) {} }  // the consumer still holds the ended sequence

        let error = await #expect(throws: LocationError.self) { try await collect(updates) }
        #expect(error == connectionLost)
        // Nothing but the next request holds the watch now: once it is served, the source stops.
        let request = rig.request()
        await rig.clock.waitForSleepers(1)
        #expect(rig.source.openCount == 2)
        let fix = Location.sample(second: 1)
        rig.source.send(fix)
        #expect(await request.value == .fix(fix))
        #expect(!rig.source.isRunning, "the failed sequence still holds the watch")
    }
}

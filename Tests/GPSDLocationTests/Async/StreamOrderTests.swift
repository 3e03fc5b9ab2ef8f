import Foundation
@testable import GPSDLocation
import GPSDTestSupport
import Testing

/// A stream is a consumer of its own (``StreamOutlet``): the manager hands it its notices in the order decided, one
/// batch at a time, and it passes them to its channel in that order, an end finishing it. The async bridge's
/// bookkeeping, as a value, keeps the streams for stop(), which leaves those the manager ended to end by their
/// notices and finishes the rest.
@Suite("Stream order", .timeLimit(.minutes(1)))
struct StreamOrderTests {
    private static let manager = AsyncRig().gps.manager
    private let id = Self.manager.reserveSubscription()
    private let other = Self.manager.reserveSubscription()
    private let seven = Location.sample(second: 7)
    private let eight = Location.sample(second: 8)

    private static func drain(_ channel: UpdateChannel<Location, any Error>) async throws -> [Location] {
        var taken: [Location] = []
        while let fix = try await channel.next(isolation: nil).get() { taken.append(fix) }
        return taken
    }

    @Test func anOutletPassesABatchInOrderLeavesOutWhatIsNotAFixAndEndsWithTheEnd() async throws {
        let channel = UpdateChannel<Location, any Error>(limit: .unbounded)
        let outlet = StreamOutlet.fixes(channel)
        outlet.receive([SubscriptionNotice(id: id, event: .location(seven)),
                        SubscriptionNotice(id: id, event: .status(.noDevice)),
                        SubscriptionNotice(id: id, event: .location(eight))])
        #expect(channel.bufferedCount == 2)
        outlet.receive([SubscriptionNotice(id: id, event: .ended(nil))])
        #expect(try await Self.drain(channel) == [seven, eight])
        // Nothing after the end reaches the sequence.
        outlet.receive([SubscriptionNotice(id: id, event: .location(seven))])
        #expect(channel.bufferedCount == 0)
    }

    @Test func anOutletEndsWithTheErrorOfAFailure() async throws {
        let channel = UpdateChannel<Location, any Error>(limit: .unbounded)
        let lost = LocationError(.connectionLost, "gone")
        StreamOutlet.fixes(channel).receive([SubscriptionNotice(id: id, event: .location(seven)),
                                             SubscriptionNotice(id: id, event: .ended(lost))])
        #expect(try await channel.next(isolation: nil).get() == seven)
        await #expect(throws: lost) { try await channel.next(isolation: nil).get() }
    }

    @Test func settleLeavesStreamNoticesAlone() {
        var state = AsyncLocationStateMachine()
        _ = state.add(id, .fixes(UpdateChannel(limit: .unbounded)))
        #expect(state.settle([SubscriptionNotice(id: id, event: .location(seven))]).isEmpty)
        #expect(state.streamIDs == [id])
    }

    @Test func stopLeavesTheStreamsTheManagerEndedAndFinishesTheRest() {
        var state = AsyncLocationStateMachine()
        _ = state.add(id, .fixes(UpdateChannel(limit: .unbounded)))
        _ = state.add(other, .fixes(UpdateChannel(limit: .unbounded)))
        // The manager ended `id` (its held epoch and end are on their way); `other` was only reserved.
        #expect(state.takeAll(keeping: [id]).streams.count == 1)
        #expect(state.streamIDs == [id])
        state.remove(id)   // its channel's end, once its notices arrive
        #expect(state.streamIDs.isEmpty)
    }

    @Test("once a stop has begun, nothing registers: a request, a stream and an observation stream are refused")
    func nothingRegistersAfterAStopBegan() async {
        var state = AsyncLocationStateMachine()
        let added = (state.add(id, .fixes(UpdateChannel(limit: .unbounded))), state.add(observation: {}, as: 1))
        #expect(added.0 && added.1)
        let ending = state.beginStop()
        #expect(ending == [id])
        let refused = (state.add(other, .fixes(UpdateChannel(limit: .unbounded))), state.add(observation: {}, as: 2))
        #expect(!refused.0 && !refused.1)
        var registered = true
        let outcome = await AsyncOutcome.of {
            try await withCheckedThrowingContinuation { (request: AsyncLocationStateMachine.Continuation) in
                registered = state.register(other, request)
                request.resume(throwing: CancellationError())   // as requestLocation does with one refused
            }
        }
        #expect(!registered && outcome == .cancelled)
        let taken = state.takeAll(keeping: [])
        #expect(taken.requests.isEmpty && taken.streams.count == 1 && taken.observations.count == 1,
                "only what registered before the stop")
        let after = state.add(other, .fixes(UpdateChannel(limit: .unbounded)))
        #expect(!after, "still, after it")
    }

    @Test func stopFinishesEveryStreamTheManagerDidNotEnd() {
        var state = AsyncLocationStateMachine()
        _ = state.add(id, .fixes(UpdateChannel(limit: .unbounded)))
        _ = state.add(other, .fixes(UpdateChannel(limit: .unbounded)))
        #expect(state.takeAll().streams.count == 2)
        #expect(state.streamIDs.isEmpty)
    }
}

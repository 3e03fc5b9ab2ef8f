import Foundation
import GPSDLocation
import GPSDTestSupport
import Testing

/// The async bridge's bookkeeping as a value: a batch of the manager's notices (in the order decided, one batch
/// at a time) settles requests and gives each stream its events in that order; stop() leaves the streams the
/// manager ended to end by their notices, and finishes the rest.
@Suite("Stream order", .timeLimit(.minutes(1)))
struct StreamOrderTests {
    private static let manager = AsyncRig().gps.manager
    private let id = Self.manager.reserveSubscription()
    private let other = Self.manager.reserveSubscription()
    private let unknown = Self.manager.reserveSubscription()
    private let seven = Location.sample(second: 7)
    private let eight = Location.sample(second: 8)
    private let nine = Location.sample(second: 9)

    private func state() -> AsyncLocationStateMachine {
        var state = AsyncLocationStateMachine()
        state.add(id, .fixes(UpdateChannel(limit: .unbounded)))
        state.add(other, .fixes(UpdateChannel(limit: .unbounded)))
        return state
    }

    @Test func aBatchGivesEachStreamItsEventsInOrderInOneDelivery() {
        var state = state()
        let settled = state.settle([
            SubscriptionNotice(id: id, event: .location(seven)), SubscriptionNotice(id: other, event: .location(eight)),
            SubscriptionNotice(id: id, event: .location(nine)), SubscriptionNotice(id: id, event: .rejectionEnded),
        ])
        #expect(settled.requests.isEmpty)
        #expect(settled.streams.map(\.id) == [id, other])
        #expect(settled.streams.map(\.events) == [[.location(seven), .location(nine), .rejectionEnded], [.location(eight)]])
        #expect(Set(state.streamIDs) == [id, other])
    }

    @Test func anEndIsPassedOnAndTheStreamForgotten() {
        var state = state()
        let settled = state.settle([SubscriptionNotice(id: id, event: .location(eight)), SubscriptionNotice(id: id, event: .ended(nil))])
        #expect(settled.streams.map(\.events) == [[.location(eight), .ended(nil)]])
        #expect(state.streamIDs == [other])
        // Nothing comes after an end; were it to, it would go nowhere.
        #expect(state.settle([SubscriptionNotice(id: id, event: .location(nine))]).streams.isEmpty)
    }

    @Test func noticesOfAnUnknownSubscriptionAreDropped() {
        var state = state()
        let settled = state.settle([SubscriptionNotice(id: unknown, event: .location(seven))])
        #expect(settled.requests.isEmpty && settled.streams.isEmpty)
    }

    @Test func stopLeavesTheStreamsTheManagerEndedAndFinishesTheRest() {
        var state = state()
        // The manager ended `id` (its held epoch and end are on their way); `other` was only reserved.
        let taken = state.takeAll(keeping: [id])
        #expect(taken.streams.count == 1)
        #expect(state.streamIDs == [id])
        let settled = state.settle([SubscriptionNotice(id: id, event: .location(nine)), SubscriptionNotice(id: id, event: .ended(nil))])
        #expect(settled.streams.map(\.events) == [[.location(nine), .ended(nil)]])
        #expect(state.streamIDs.isEmpty)
    }

    @Test func stopFinishesEveryStreamTheManagerDidNotEnd() {
        var state = state()
        #expect(state.takeAll().streams.count == 2)
        #expect(state.streamIDs.isEmpty)
    }
}

import Foundation
import GPSDLocation
import GPSDTestSupport
import Testing

/// The async bridge's bookkeeping gives each stream its events in the order the manager decided them, though
/// the batches are carried out by the threads that decided them: the batch `stop()` decides on its own thread
/// (the epoch held back, then the end) can arrive before a fix the session's thread decided earlier, and two
/// threads can be passing events to one stream at once.
@Suite("Stream order", .timeLimit(.minutes(1)))
struct StreamOrderTests {
    private let id = AsyncRig().gps.manager.reserveSubscription()
    private let seven = Location.sample(second: 7)
    private let eight = Location.sample(second: 8)
    private let nine = Location.sample(second: 9)

    private func notice(_ number: UInt64, _ event: SubscriptionEvent) -> SubscriptionNotice {
        SubscriptionNotice(id: id, number: number, event: event)
    }

    private func state() -> AsyncLocationStateMachine {
        var state = AsyncLocationStateMachine()
        state.add(id, .fixes(UpdateChannel(limit: .unbounded)))
        return state
    }

    /// What the thread that takes `notices` passes on, as the receiver does: what `take` hands it, then what
    /// queued for the stream meanwhile, until nothing is left.
    private func deliver(_ notices: [SubscriptionNotice], to state: inout AsyncLocationStateMachine) -> [SubscriptionEvent] {
        var passed: [SubscriptionEvent] = []
        for delivery in state.settle(notices).streams {
            passed += delivery.events
            while let queued = state.nextEvents(for: delivery.id) { passed += queued }
        }
        return passed
    }

    @Test func aNoticeThatOvertakesAnEarlierOneWaitsForIt() {
        var state = state()
        #expect(deliver([notice(1, .location(seven))], to: &state) == [.location(seven)])
        // stop()'s batch: the held epoch 9 and the end, while epoch 8 is still on the session's thread.
        #expect(deliver([notice(3, .location(nine)), notice(4, .ended(nil))], to: &state).isEmpty)
        #expect(state.streamIDs == [id])
        #expect(deliver([notice(2, .location(eight))], to: &state) == [.location(eight), .location(nine), .ended(nil)])
        #expect(state.streamIDs.isEmpty)
    }

    @Test func whileOneThreadPassesEventsOnAnotherThreadsQueueForIt() throws {
        var state = state()
        // The session's thread takes fix 8 and, unlocked, is passing it on …
        let first = state.settle([notice(1, .location(eight))]).streams
        #expect(first.map(\.events) == [[.location(eight)]])
        // … when stop()'s thread takes fix 9 and the end: they are not its to pass on, or 9 could overtake 8.
        #expect(state.settle([notice(2, .location(nine)), notice(3, .ended(nil))]).streams.isEmpty)
        // The session's thread, done with 8, passes them on next; then nothing is left.
        let delivery = try #require(first.first)
        #expect(state.nextEvents(for: delivery.id) == [.location(nine), .ended(nil)])
        #expect(state.nextEvents(for: delivery.id) == nil)
        #expect(state.streamIDs.isEmpty)
    }

    @Test func stopLeavesAStreamWhoseEndCameEarlyToEndAfterTheFixStillOnItsWay() {
        var state = state()
        _ = deliver([notice(2, .location(nine)), notice(3, .ended(nil))], to: &state)
        #expect(state.takeAll().streams.isEmpty)   // not finished here: fix 8 would be lost
        #expect(deliver([notice(1, .location(eight))], to: &state) == [.location(eight), .location(nine), .ended(nil)])
        #expect(state.streamIDs.isEmpty)
    }

    @Test func stopLeavesAStreamTheManagerEndedBeforeToEndWithItsLastNotices() {
        var state = state()
        // The source ended: the manager passed the held epoch and the end to a batch another thread carries out.
        #expect(state.takeAll(keeping: [id]).streams.isEmpty)
        #expect(deliver([notice(1, .location(nine)), notice(2, .ended(nil))], to: &state) == [.location(nine), .ended(nil)])
        #expect(state.streamIDs.isEmpty)
    }

    @Test func stopQueuesTheEndOfAStreamAnotherThreadIsPassingFixesTo() throws {
        var state = state()
        let first = state.settle([notice(1, .location(eight))]).streams   // the session's thread, passing 8 on
        // stop() on another thread, for a stream the manager did not end (it was still subscribing): finishing
        // it here could overtake fix 8.
        #expect(state.takeAll().streams.isEmpty)
        let delivery = try #require(first.first)
        #expect(state.nextEvents(for: delivery.id) == [.ended(nil)])
        #expect(state.nextEvents(for: delivery.id) == nil)
    }

    @Test func stopFinishesAStreamWithNothingOnItsWay() {
        var state = state()
        _ = deliver([notice(1, .location(seven))], to: &state)
        #expect(state.takeAll().streams.count == 1)
        #expect(state.streamIDs.isEmpty)
    }
}

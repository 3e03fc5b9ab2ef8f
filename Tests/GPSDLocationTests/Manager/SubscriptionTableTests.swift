import Foundation
@testable import GPSDLocation
import GPSDSystem
import GPSDTestSupport
import Testing

/// The subscription table of the manager's state machine as a value: each input, and what it returns (the
/// consumers' notices, whether the delegate is called or fails, which subscriptions ended), each test named after
/// the input and what it causes.
@Suite("The subscription table as a value")
struct SubscriptionTableTests {
    /// A consumer that is only told apart by identity: notices are read from what the table returns.
    final class Consumer: SubscriptionConsumer {
        func receive(_ notices: [SubscriptionNotice]) {}
    }

    static let failure = LocationError(.connectionLost, "the peer hung up")

    /// Subscribes `consumer` for `request` under a fresh id, and returns the id.
    static func subscribe(
        _ table: inout SubscriptionTable, _ request: SubscriptionRequest, _ consumer: Consumer,
        sawConnection: Bool = true
    ) throws -> SubscriptionID {
        let id = table.reserve()
        let subscribed = table.subscribe(id, request, consumer, sawConnection: sawConnection)
        try #require(subscribed)
        return id
    }

    /// The notices `notifications` holds for `consumer`, in the order decided.
    static func notices(_ notifications: Notifications, for consumer: Consumer) -> [SubscriptionNotice] {
        notifications.batches.filter { $0.consumer === consumer }.flatMap(\.notices)
    }

    /// The same, by subscription: where the table does not order subscriptions among themselves.
    static func noticesByID(_ notifications: Notifications, for consumer: Consumer) -> [SubscriptionNotice] {
        notices(notifications, for: consumer).sorted { $0.id < $1.id }   // stable: each id's in the order decided
    }

    static func notice(_ id: SubscriptionID, _ event: SubscriptionEvent) -> SubscriptionNotice {
        SubscriptionNotice(id: id, event: event)
    }

    /// The reason of an `.ended` event; `nil` for any other event, or an end without a reason.
    static func reason(_ event: SubscriptionEvent?) -> LocationError? {
        guard case .ended(let reason) = event else { return nil }
        return reason
    }

    // MARK: The delegate

    @Test func emptyTableWantsNoSession() {
        let table = SubscriptionTable()
        #expect(!table.wantsSession)
        #expect(!table.delegateSubscribed)
        #expect(!table.wantsHeldFix)
        #expect(table.generation == 0)
    }

    @Test func startDelegateUpdatesSubscribesTheDelegateAndWantsASession() {
        var table = SubscriptionTable()
        table.startDelegateUpdates()
        #expect(table.wantsSession)
        #expect(table.delegateSubscribed)
        #expect(table.generation == 0)
    }

    @Test func startDelegateUpdatesAgainKeepsWhatTheDistanceFilterMeasuresFrom() {
        var table = SubscriptionTable()
        table.distanceFilter = 25
        table.startDelegateUpdates()
        #expect(table.deliver(Location.sample(second: 0), held: false).toDelegate)
        table.startDelegateUpdates()
        // 10 m from the fix delivered before the second start: a new subscription would take it.
        #expect(!table.deliver(Location.sample(second: 1), held: false).toDelegate)
    }

    @Test func stopDelegateEndsUpdatesAndRequestAndBumpsTheGeneration() {
        var table = SubscriptionTable()
        table.startDelegateUpdates()
        _ = table.requestDelegateLocation(sawConnection: true)
        table.stopDelegate()
        #expect(!table.wantsSession)
        #expect(!table.delegateSubscribed)
        #expect(table.generation == 1)
        #expect(!table.deliver(Location.sample(second: 1), held: false).toDelegate)
    }

    @Test func stopDelegateBumpsTheGenerationEachTime() {
        var table = SubscriptionTable()
        table.stopDelegate()
        table.stopDelegate()
        #expect(table.generation == 2)
    }

    @Test func stopDelegateLeavesOtherConsumersSubscribed() throws {
        var table = SubscriptionTable()
        table.startDelegateUpdates()
        let id = try Self.subscribe(&table, .continuous(), Consumer())
        table.stopDelegate()
        #expect(table.wantsSession)
        #expect(table.unsubscribe(id) != nil)
    }

    @Test func requestDelegateLocationNumbersEachRequestAndWantsASession() {
        var table = SubscriptionTable()
        #expect(table.requestDelegateLocation(sawConnection: false) == 1)
        #expect(table.requestDelegateLocation(sawConnection: false) == 2)
        #expect(table.wantsSession)
        #expect(table.delegateSubscribed)
    }

    @Test func delegateRequestTimedOutEndsTheCurrentRequest() {
        var table = SubscriptionTable()
        let number = table.requestDelegateLocation(sawConnection: true)
        let ended = table.delegateRequestTimedOut(number)
        #expect(ended)
        #expect(!table.wantsSession)
        #expect(!table.delegateSubscribed)
    }

    @Test func delegateRequestTimedOutOfAnEarlierRequestIsIgnored() {
        var table = SubscriptionTable()
        let first = table.requestDelegateLocation(sawConnection: true)
        let second = table.requestDelegateLocation(sawConnection: true)
        let endedFirst = table.delegateRequestTimedOut(first)
        #expect(!endedFirst)
        #expect(table.wantsSession)
        let endedSecond = table.delegateRequestTimedOut(second)
        #expect(endedSecond)
        #expect(!table.wantsSession)
    }

    @Test func delegateRequestTimedOutTwiceIsIgnoredTheSecondTime() {
        var table = SubscriptionTable()
        let number = table.requestDelegateLocation(sawConnection: true)
        let ended = table.delegateRequestTimedOut(number)
        let endedAgain = table.delegateRequestTimedOut(number)
        #expect(ended)
        #expect(!endedAgain)
    }

    @Test func delegateRequestTimedOutAfterAFixServedItIsIgnored() {
        var table = SubscriptionTable()
        let number = table.requestDelegateLocation(sawConnection: true)
        #expect(table.deliver(Location.sample(second: 1), held: false).toDelegate)
        let ended = table.delegateRequestTimedOut(number)
        #expect(!ended)
    }

    // MARK: Reservations and subscriptions

    @Test func reserveHandsOutDistinctIdsAfterTheDelegatesAndWantsNoSession() {
        var table = SubscriptionTable()
        let first = table.reserve()
        let second = table.reserve()
        #expect(first != second)
        #expect(first.rawValue >= SubscriptionID.firstReservable)
        #expect(second.rawValue >= SubscriptionID.firstReservable)
        #expect(!table.wantsSession)
    }

    @Test func subscribeUnderAReservedIdWantsASession() {
        var table = SubscriptionTable()
        let id = table.reserve()
        let subscribed = table.subscribe(id, .continuous(), Consumer(), sawConnection: false)
        #expect(subscribed)
        #expect(table.wantsSession)
        #expect(!table.delegateSubscribed)
    }

    @Test func subscribeAGivenBackIdRefuses() {
        var table = SubscriptionTable()
        let id = table.reserve()
        #expect(table.unsubscribe(id) == nil)
        let subscribed = table.subscribe(id, .continuous(), Consumer(), sawConnection: false)
        #expect(!subscribed)
        #expect(!table.wantsSession)
    }

    @Test func subscribeTwiceUnderOneIdRefusesTheSecond() {
        var table = SubscriptionTable()
        let id = table.reserve()
        let first = table.subscribe(id, .continuous(), Consumer(), sawConnection: false)
        let second = table.subscribe(id, .oneShot(), Consumer(), sawConnection: false)
        #expect(first)
        #expect(!second)
    }

    @Test func subscribeAnIdNeverReservedRefuses() {
        var table = SubscriptionTable()
        let unknown = table.subscribe(SubscriptionID(rawValue: 99), .continuous(), Consumer(), sawConnection: false)
        let delegates = table.subscribe(.delegateUpdates, .continuous(), Consumer(), sawConnection: false)
        #expect(!unknown)
        #expect(!delegates)
        #expect(!table.wantsSession)
    }

    @Test func subscribeAOneShotWithAMaximumAgeWantsTheHeldFix() throws {
        var table = SubscriptionTable()
        _ = try Self.subscribe(&table, .oneShot(), Consumer())
        _ = try Self.subscribe(&table, .continuous(), Consumer())
        #expect(!table.wantsHeldFix)
        let id = try Self.subscribe(&table, .oneShot(maximumAge: .seconds(5)), Consumer())
        #expect(table.wantsHeldFix)
        _ = table.unsubscribe(id)
        #expect(!table.wantsHeldFix)
    }

    // MARK: Giving ids back

    @Test func unsubscribeALiveSubscriptionReturnsTheBestFixItSaw() throws {
        var table = SubscriptionTable()
        let id = try Self.subscribe(&table, .oneShot(desiredAccuracy: 1), Consumer())
        let best = Location.sample(second: 3, accuracy: 3)
        for fix in [Location.sample(second: 1, accuracy: 5), Location.sample(second: 2, accuracy: 8), best] {
            #expect(!table.deliver(fix, held: false).endedAny)
        }
        let given = table.unsubscribe(id)
        let ended = try #require(given)
        #expect(ended.best == best)
        #expect(!table.wantsSession)
    }

    @Test func unsubscribeALiveSubscriptionThatSawNothingReturnsNoBest() throws {
        var table = SubscriptionTable()
        let id = try Self.subscribe(&table, .continuous(), Consumer())
        let given = table.unsubscribe(id)
        let ended = try #require(given)
        #expect(ended.best == nil)
    }

    @Test func unsubscribeAReservationReturnsNil() {
        var table = SubscriptionTable()
        #expect(table.unsubscribe(table.reserve()) == nil)
    }

    @Test func unsubscribeTwiceReturnsNilTheSecondTime() throws {
        var table = SubscriptionTable()
        let id = try Self.subscribe(&table, .continuous(), Consumer())
        #expect(table.unsubscribe(id) != nil)
        #expect(table.unsubscribe(id) == nil)
    }

    // MARK: A consumer's stop

    @Test func endSubscriptionsEndsEachWithEndedNilInTheOrderOfTheirIds() throws {
        var table = SubscriptionTable()
        let consumer = Consumer()
        let first = try Self.subscribe(&table, .continuous(), consumer)
        let second = try Self.subscribe(&table, .oneShot(), consumer)
        let (notifications, ended) = table.endSubscriptions([second, first])
        #expect(Self.notices(notifications, for: consumer) == [
            Self.notice(first, .ended(nil)), Self.notice(second, .ended(nil)),
        ])
        #expect(ended == [first, second])
        #expect(!table.wantsSession)
    }

    @Test func endSubscriptionsEndsAfterWhatWasDelivered() throws {
        var table = SubscriptionTable()
        let consumer = Consumer()
        let id = try Self.subscribe(&table, .continuous(), consumer)
        _ = table.deliver(Location.sample(second: 1), held: false)
        _ = table.deliver(Location.sample(second: 2), held: false)
        #expect(Self.notices(table.endSubscriptions([id]).0, for: consumer) == [Self.notice(id, .ended(nil))])
    }

    @Test func endSubscriptionsPassesHeldEpochsOnBeforeTheEnd() throws {
        var table = SubscriptionTable()
        let consumer = Consumer()
        let id = try Self.subscribe(&table, .continuous(delivery: .oncePerEpoch), consumer)
        let a = Location.sample(second: 1, device: "/dev/a")
        let b = Location.sample(second: 1, device: "/dev/b")
        #expect(Self.notices(table.deliver(b, held: false).notifications, for: consumer).isEmpty)
        #expect(Self.notices(table.deliver(a, held: false).notifications, for: consumer).isEmpty)
        #expect(Self.notices(table.endSubscriptions([id]).0, for: consumer) == [
            Self.notice(id, .location(a)), Self.notice(id, .location(b)), Self.notice(id, .ended(nil)),
        ])
    }

    @Test func endSubscriptionsReportsTheIdsEndedNowOrBeforeButNotThoseOnlyReserved() throws {
        var table = SubscriptionTable()
        let consumer = Consumer()
        let served = try Self.subscribe(&table, .oneShot(), consumer)
        let live = try Self.subscribe(&table, .continuous(), consumer)
        let reserved = table.reserve()
        #expect(table.deliver(Location.sample(second: 1), held: false).endedAny)   // ends `served`
        let (notifications, ended) = table.endSubscriptions([reserved, live, served])
        #expect(ended == [served, live].sorted())
        #expect(Self.notices(notifications, for: consumer) == [Self.notice(live, .ended(nil))])
    }

    @Test func endSubscriptionsLeavesTheDelegateSubscribed() {
        var table = SubscriptionTable()
        table.startDelegateUpdates()
        let (notifications, ended) = table.endSubscriptions([.delegateUpdates])
        #expect(notifications.isEmpty)
        #expect(ended.isEmpty)
        #expect(table.delegateSubscribed)
    }

    // MARK: Connection

    @Test func endRequestsThatNeverConnectedFailsOnlyOneShotsThatSawNoConnection() throws {
        var table = SubscriptionTable()
        let consumer = Consumer()
        let refused = try Self.subscribe(&table, .oneShot(), consumer, sawConnection: false)
        let connected = try Self.subscribe(&table, .oneShot(), consumer, sawConnection: true)
        let stream = try Self.subscribe(&table, .continuous(), consumer, sawConnection: false)
        table.startDelegateUpdates()
        let ending = table.endRequestsThatNeverConnected(with: Self.failure)
        #expect(Self.notices(ending.notifications, for: consumer) == [Self.notice(refused, .ended(Self.failure))])
        #expect(ending.delegateFailure == nil)
        #expect(table.unsubscribe(refused) == nil)
        #expect(table.unsubscribe(connected) != nil)
        #expect(table.unsubscribe(stream) != nil)
        #expect(table.delegateSubscribed)
    }

    @Test func endRequestsThatNeverConnectedFailsTheDelegatesRequest() {
        var table = SubscriptionTable()
        _ = table.requestDelegateLocation(sawConnection: false)
        let ending = table.endRequestsThatNeverConnected(with: Self.failure)
        #expect(ending.delegateFailure == Self.failure)
        #expect(ending.notifications.isEmpty)
        #expect(!table.delegateSubscribed)
        #expect(!table.wantsSession)
    }

    @Test func endRequestsThatNeverConnectedSparesADelegateRequestThatConnected() {
        var table = SubscriptionTable()
        _ = table.requestDelegateLocation(sawConnection: true)
        #expect(table.endRequestsThatNeverConnected(with: Self.failure).delegateFailure == nil)
        #expect(table.delegateSubscribed)
    }

    @Test func sessionConnectedSparesTheWaitingRequestsFromFailing() throws {
        var table = SubscriptionTable()
        let consumer = Consumer()
        let id = try Self.subscribe(&table, .oneShot(), consumer, sawConnection: false)
        _ = table.requestDelegateLocation(sawConnection: false)
        table.sessionConnected()
        let ending = table.endRequestsThatNeverConnected(with: Self.failure)
        #expect(ending.notifications.isEmpty)
        #expect(ending.delegateFailure == nil)
        #expect(table.delegateSubscribed)
        #expect(table.unsubscribe(id) != nil)
    }

    // MARK: The end of everything

    @Test func endAllWithAnErrorEndsEverySubscriptionWithIt() throws {
        var table = SubscriptionTable()
        let consumer = Consumer()
        let request = try Self.subscribe(&table, .oneShot(), consumer)
        let stream = try Self.subscribe(&table, .continuous(), consumer)
        table.startDelegateUpdates()
        let ending = table.endAll(with: Self.failure, latest: nil)
        #expect(Self.notices(ending.notifications, for: consumer) == [
            Self.notice(request, .ended(Self.failure)), Self.notice(stream, .ended(Self.failure)),
        ])
        #expect(ending.delegateFailure == Self.failure)
        #expect(!table.wantsSession)
        #expect(!table.delegateSubscribed)
    }

    @Test func endAllAtARecordingsEndFailsAOneShotWithLocationUnknownAndItsBest() throws {
        var table = SubscriptionTable()
        let consumer = Consumer()
        let id = try Self.subscribe(&table, .oneShot(desiredAccuracy: 1), consumer)
        let best = Location.sample(second: 1, accuracy: 5)
        _ = table.deliver(best, held: false)
        let notices = Self.notices(table.endAll(with: nil, latest: nil).notifications, for: consumer)
        #expect(notices.map(\.id) == [id])
        let reason = try #require(Self.reason(notices.first?.event))
        #expect(reason.code == .locationUnknown)
        #expect(reason.bestLocation == best)
    }

    @Test func endAllAtARecordingsEndEndsAContinuousSubscriptionQuietly() throws {
        var table = SubscriptionTable()
        let consumer = Consumer()
        let id = try Self.subscribe(&table, .continuous(), consumer)
        let ending = table.endAll(with: nil, latest: Location.sample(second: 1))
        #expect(Self.notices(ending.notifications, for: consumer) == [Self.notice(id, .ended(nil))])
        #expect(ending.delegateFailure == nil)
    }

    @Test func endAllAtARecordingsEndFailsTheDelegatesRequestWithTheLatestFix() throws {
        var table = SubscriptionTable()
        _ = table.requestDelegateLocation(sawConnection: true)
        let latest = Location.sample(second: 4)
        let failure = try #require(table.endAll(with: nil, latest: latest).delegateFailure)
        #expect(failure.code == .locationUnknown)
        #expect(failure.bestLocation == latest)
        #expect(!table.delegateSubscribed)
    }

    @Test func endAllAtARecordingsEndLeavesTheDelegatesUpdatesQuiet() {
        var table = SubscriptionTable()
        table.startDelegateUpdates()
        #expect(table.endAll(with: nil, latest: Location.sample(second: 1)).delegateFailure == nil)
        #expect(!table.delegateSubscribed)
        #expect(!table.wantsSession)
    }

    @Test func endAllPassesHeldEpochsOnBeforeTheEnd() throws {
        var table = SubscriptionTable()
        let consumer = Consumer()
        let id = try Self.subscribe(&table, .continuous(delivery: .oncePerEpoch), consumer)
        let fix = Location.sample(second: 1)
        _ = table.deliver(fix, held: false)
        #expect(Self.notices(table.endAll(with: Self.failure, latest: fix).notifications, for: consumer) == [
            Self.notice(id, .location(fix)), Self.notice(id, .ended(Self.failure)),
        ])
    }

    // MARK: Fixes

    @Test func deliverWithoutSubscriptionsCausesNothing() {
        var table = SubscriptionTable()
        let delivery = table.deliver(Location.sample(second: 1), held: false)
        #expect(delivery.notifications.isEmpty)
        #expect(!delivery.toDelegate)
        #expect(!delivery.endedAny)
    }

    @Test func deliverToAOneShotThatMeetsItsAccuracyEndsIt() throws {
        var table = SubscriptionTable()
        let consumer = Consumer()
        let id = try Self.subscribe(&table, .oneShot(desiredAccuracy: 10), consumer)
        let fix = Location.sample(second: 1, accuracy: 5)
        let delivery = table.deliver(fix, held: false)
        #expect(Self.notices(delivery.notifications, for: consumer) == [Self.notice(id, .location(fix))])
        #expect(delivery.endedAny)
        #expect(!delivery.toDelegate)
        #expect(!table.wantsSession)
        #expect(table.unsubscribe(id) == nil)
    }

    @Test func deliverToAOneShotThatMissesItsAccuracyKeepsTheBetterFix() throws {
        var table = SubscriptionTable()
        let consumer = Consumer()
        let id = try Self.subscribe(&table, .oneShot(desiredAccuracy: 1), consumer)
        let better = Location.sample(second: 1, accuracy: 5)
        for fix in [better, Location.sample(second: 2, accuracy: 8), Location.sample(second: 3, accuracy: nil)] {
            let delivery = table.deliver(fix, held: false)
            #expect(delivery.notifications.isEmpty)
            #expect(!delivery.endedAny)
        }
        #expect(table.wantsSession)
        #expect(table.unsubscribe(id)?.best == better)
    }

    @Test func deliverToTheDelegatesRequestCallsTheDelegateAndEndsIt() {
        var table = SubscriptionTable()
        table.desiredAccuracy = 10
        _ = table.requestDelegateLocation(sawConnection: true)
        let missed = table.deliver(Location.sample(second: 1, accuracy: 50), held: false)
        #expect(!missed.toDelegate)
        #expect(!missed.endedAny)
        let met = table.deliver(Location.sample(second: 2, accuracy: 5), held: false)
        #expect(met.toDelegate)
        #expect(met.endedAny)
        #expect(!table.delegateSubscribed)
    }

    @Test func deliverToTheDelegatesUpdatesAppliesItsDistanceFilter() {
        var table = SubscriptionTable()
        table.distanceFilter = 25
        table.startDelegateUpdates()
        // 10 m apart: 0, 10, 20 and 30 m from the first.
        let called = (0...3).map { table.deliver(Location.sample(second: $0), held: false) }
        #expect(called.map(\.toDelegate) == [true, false, false, true])
        #expect(called.allSatisfy { !$0.endedAny })
    }

    @Test func deliverToTheDelegatesUpdatesAppliesItsDesiredAccuracy() {
        var table = SubscriptionTable()
        table.desiredAccuracy = 3
        table.startDelegateUpdates()
        #expect(!table.deliver(Location.sample(second: 1, accuracy: 5), held: false).toDelegate)
        #expect(table.deliver(Location.sample(second: 2, accuracy: 3), held: false).toDelegate)
        #expect(table.wantsSession)
    }

    @Test func deliverServingTheDelegatesRequestMovesWhereItsDistanceFilterMeasuresFrom() {
        var table = SubscriptionTable()
        table.distanceFilter = 25
        table.startDelegateUpdates()
        #expect(table.deliver(Location.sample(second: 0), held: false).toDelegate)
        _ = table.requestDelegateLocation(sawConnection: true)
        #expect(table.deliver(Location.sample(second: 1), held: false).toDelegate)   // the request takes it
        // 30 m from the first fix, but 20 m from the one the request took.
        #expect(!table.deliver(Location.sample(second: 3), held: false).toDelegate)
    }

    @Test func deliverToAStreamAsReportedPassesEachFixNumbered() throws {
        var table = SubscriptionTable()
        let consumer = Consumer()
        let id = try Self.subscribe(&table, .continuous(), consumer)
        let fixes = (1...3).map { Location.sample(second: $0) }
        let notices = fixes.flatMap { Self.notices(table.deliver($0, held: false).notifications, for: consumer) }
        #expect(notices == [
            Self.notice(id, .location(fixes[0])), Self.notice(id, .location(fixes[1])),
            Self.notice(id, .location(fixes[2])),
        ])
    }

    @Test func deliverToAStreamAppliesItsAccuracyAndDistanceFilters() throws {
        var table = SubscriptionTable()
        let consumer = Consumer()
        let id = try Self.subscribe(&table, .continuous(desiredAccuracy: 6, distanceFilter: 15), consumer)
        let first = Location.sample(second: 0, accuracy: 5)
        let far = Location.sample(second: 2, accuracy: 5)
        let fixes = [first, Location.sample(second: 1, accuracy: 5), Location.sample(second: 2, accuracy: 8), far]
        let notices = fixes.flatMap { Self.notices(table.deliver($0, held: false).notifications, for: consumer) }
        #expect(notices == [Self.notice(id, .location(first)), Self.notice(id, .location(far))])
    }

    @Test func deliverBatchesNoticesByConsumerEachSubscriptionNumberedApart() throws {
        var table = SubscriptionTable()
        let one = Consumer()
        let other = Consumer()
        let a = try Self.subscribe(&table, .continuous(), one)
        let b = try Self.subscribe(&table, .continuous(), one)
        let c = try Self.subscribe(&table, .continuous(), other)
        _ = table.deliver(Location.sample(second: 1), held: false)
        let fix = Location.sample(second: 2)
        let notifications = table.deliver(fix, held: false).notifications
        #expect(notifications.batches.count == 2)
        #expect(Self.noticesByID(notifications, for: one) == [
            Self.notice(a, .location(fix)), Self.notice(b, .location(fix)),
        ])
        #expect(Self.notices(notifications, for: other) == [Self.notice(c, .location(fix))])
    }

    @Test func deliverToAOncePerEpochStreamHoldsTheNewestRecordUntilTheNextEpoch() throws {
        var table = SubscriptionTable()
        let consumer = Consumer()
        let id = try Self.subscribe(&table, .continuous(delivery: .oncePerEpoch), consumer)
        var fuller = Location.sample(second: 1)
        fuller.climb = 0.5
        #expect(Self.notices(table.deliver(Location.sample(second: 1), held: false).notifications, for: consumer).isEmpty)
        #expect(Self.notices(table.deliver(fuller, held: false).notifications, for: consumer).isEmpty)
        let next = table.deliver(Location.sample(second: 2), held: false)
        #expect(Self.notices(next.notifications, for: consumer) == [Self.notice(id, .location(fuller))])
        #expect(!next.endedAny)
        #expect(Self.notices(table.flushHeldEpochs(), for: consumer) == [
            Self.notice(id, .location(Location.sample(second: 2))),
        ])
    }

    @Test func deliverToAOncePerEpochStreamHoldsEachReceiverApart() throws {
        var table = SubscriptionTable()
        let consumer = Consumer()
        let id = try Self.subscribe(&table, .continuous(delivery: .oncePerEpoch), consumer)
        let a = Location.sample(second: 1, device: "/dev/a")
        _ = table.deliver(a, held: false)
        #expect(Self.notices(table.deliver(Location.sample(second: 2, device: "/dev/b"), held: false).notifications,
                             for: consumer).isEmpty)
        let next = table.deliver(Location.sample(second: 2, device: "/dev/a"), held: false)
        #expect(Self.notices(next.notifications, for: consumer) == [Self.notice(id, .location(a))])
    }

    @Test func deliverOfARecordOfAnEpochAlreadyPassedOnIsNotHeldAgain() throws {
        var table = SubscriptionTable()
        let consumer = Consumer()
        let id = try Self.subscribe(&table, .continuous(delivery: .oncePerEpoch), consumer)
        _ = table.deliver(Location.sample(second: 1), held: false)
        #expect(Self.notices(table.flushHeldEpochs(), for: consumer).count == 1)
        var completed = Location.sample(second: 1)   // its GST, after the flush
        completed.deviation = Location.Deviation(latitude: 1, longitude: 1)
        #expect(Self.notices(table.deliver(completed, held: false).notifications, for: consumer).isEmpty)
        let next = Location.sample(second: 2)
        #expect(Self.notices(table.deliver(next, held: false).notifications, for: consumer).isEmpty)
        #expect(Self.notices(table.flushHeldEpochs(), for: consumer) == [Self.notice(id, .location(next))])
    }

    @Test func deliverOfAHeldFixGoesToTheDelegateAndToOneShotsWhoseMaximumAgeAllowsIt() throws {
        var table = SubscriptionTable()
        table.startDelegateUpdates()
        let allowing = Consumer()
        let tooYoung = Consumer()
        let others = Consumer()
        let allows = try Self.subscribe(&table, .oneShot(maximumAge: .seconds(5)), allowing)
        let refuses = try Self.subscribe(&table, .oneShot(maximumAge: .seconds(4)), tooYoung)
        let noAge = try Self.subscribe(&table, .oneShot(), others)
        let stream = try Self.subscribe(&table, .continuous(), others)
        let epochs = try Self.subscribe(&table, .continuous(delivery: .oncePerEpoch), others)
        var fix = Location.sample(second: 1)
        fix.arrival = Location.Arrival(instant: .now, date: .now, delay: .seconds(5))
        let delivery = table.deliver(fix, held: true)
        #expect(delivery.toDelegate)
        #expect(delivery.endedAny)
        #expect(Self.notices(delivery.notifications, for: allowing) == [Self.notice(allows, .location(fix))])
        #expect(Self.notices(delivery.notifications, for: tooYoung).isEmpty)
        #expect(Self.notices(delivery.notifications, for: others).isEmpty)
        #expect(table.flushHeldEpochs().isEmpty)   // the once-per-epoch stream holds nothing
        for id in [refuses, noAge, stream, epochs] { #expect(table.unsubscribe(id) != nil) }
    }

    @Test func deliverAHeldFixOfUnknownAgeGoesToTheDelegateAlone() throws {
        var table = SubscriptionTable()
        table.startDelegateUpdates()
        let consumer = Consumer()
        let anyAge = try Self.subscribe(&table, .oneShot(maximumAge: .seconds(1_000_000)), consumer)
        var fix = Location.sample(second: 1)
        fix.arrival = Location.Arrival(instant: .now, date: .now, delay: nil)
        let delivery = table.deliver(fix, held: true)
        #expect(delivery.toDelegate)
        #expect(!delivery.endedAny)
        #expect(Self.notices(delivery.notifications, for: consumer).isEmpty)
        #expect(table.unsubscribe(anyAge) != nil)
    }

    // MARK: Held epochs

    @Test func flushHeldEpochsPassesOnEveryReceiversEpochOnce() throws {
        var table = SubscriptionTable()
        let consumer = Consumer()
        let id = try Self.subscribe(&table, .continuous(delivery: .oncePerEpoch), consumer)
        let a = Location.sample(second: 1, device: "/dev/a")
        let b = Location.sample(second: 1, device: "/dev/b")
        _ = table.deliver(b, held: false)
        _ = table.deliver(a, held: false)
        #expect(Self.notices(table.flushHeldEpochs(), for: consumer) == [
            Self.notice(id, .location(a)), Self.notice(id, .location(b)),
        ])
        #expect(table.flushHeldEpochs().isEmpty)
    }

    @Test func flushHeldEpochsOfOneDevicePassesOnOnlyItsEpoch() throws {
        var table = SubscriptionTable()
        let consumer = Consumer()
        let id = try Self.subscribe(&table, .continuous(delivery: .oncePerEpoch), consumer)
        let a = Location.sample(second: 1, device: "/dev/a")
        let b = Location.sample(second: 1, device: "/dev/b")
        _ = table.deliver(a, held: false)
        _ = table.deliver(b, held: false)
        #expect(Self.notices(table.flushHeldEpochs(of: "/dev/a"), for: consumer) == [Self.notice(id, .location(a))])
        #expect(Self.notices(table.flushHeldEpochs(), for: consumer) == [Self.notice(id, .location(b))])
    }

    @Test func flushHeldEpochsOfTheEmptyNamePassesOnAFixWithoutDevice() throws {
        var table = SubscriptionTable()
        let consumer = Consumer()
        let id = try Self.subscribe(&table, .continuous(delivery: .oncePerEpoch), consumer)
        let fix = Location.sample(second: 1, device: nil)
        _ = table.deliver(fix, held: false)
        #expect(table.flushHeldEpochs(of: "/dev/test").isEmpty)
        #expect(Self.notices(table.flushHeldEpochs(of: ""), for: consumer) == [Self.notice(id, .location(fix))])
    }

    @Test func flushHeldEpochsPassesAnEpochOnThroughTheStreamsFilters() throws {
        var table = SubscriptionTable()
        let consumer = Consumer()
        let id = try Self.subscribe(&table, .continuous(desiredAccuracy: 3, delivery: .oncePerEpoch), consumer)
        _ = table.deliver(Location.sample(second: 1, accuracy: 5), held: false)
        #expect(table.flushHeldEpochs().isEmpty)
        let accurate = Location.sample(second: 2, accuracy: 2)
        _ = table.deliver(accurate, held: false)
        #expect(Self.notices(table.flushHeldEpochs(), for: consumer) == [Self.notice(id, .location(accurate))])
    }

    @Test func forgetReceiverPassesOnItsHeldEpochAndDropsWhatWasKeptOfIt() throws {
        var table = SubscriptionTable()
        let consumer = Consumer()
        let id = try Self.subscribe(&table, .continuous(delivery: .oncePerEpoch), consumer)
        let a = Location.sample(second: 1, device: "/dev/a")
        let b = Location.sample(second: 1, device: "/dev/b")
        _ = table.deliver(a, held: false)
        _ = table.deliver(b, held: false)
        #expect(Self.notices(table.forget(receiver: "/dev/a"), for: consumer) == [Self.notice(id, .location(a))])
        // The epoch it passed on is forgotten too: the same record, taken as a first one, is held again.
        _ = table.deliver(a, held: false)
        #expect(Self.notices(table.flushHeldEpochs(), for: consumer) == [
            Self.notice(id, .location(a)), Self.notice(id, .location(b)),
        ])
    }

    // MARK: Observers

    /// Which observers were called, by name.
    final class Calls: Sendable {
        private let names = Locked<[String]>([])
        var called: [String] { names.withLock { $0 } }
        func observer(_ name: String) -> SubscriptionTable.Observer { { _ in self.names.withLock { $0.append(name) } } }
    }

    @Test func addObserverHandsOutIdsOfItsOwnAndCallsNothing() {
        var table = SubscriptionTable()
        let calls = Calls()
        let first = table.addObserver(calls.observer("first"))
        let second = table.addObserver(calls.observer("second"))
        #expect(first != second)
        #expect(table.observers().map(\.id).sorted() == [first, second].sorted())
        #expect(table.observers(only: second).map(\.id) == [second])
        #expect(calls.called.isEmpty)
    }

    @Test func observersNamesEveryObserverWithItsId() {
        var table = SubscriptionTable()
        #expect(table.observers().isEmpty)
        let calls = Calls()
        let a = table.addObserver(calls.observer("a"))
        let b = table.addObserver(calls.observer("b"))
        let observers = table.observers()
        for (_, observer) in observers { observer(.sessionEnded(nil)) }
        #expect(calls.called.sorted() == ["a", "b"])
        #expect(Set(observers.map(\.id)) == [a, b])
    }

    @Test func removeObserverStopsNamingIt() {
        var table = SubscriptionTable()
        let calls = Calls()
        let kept = table.addObserver(calls.observer("kept"))
        let removed = table.addObserver(calls.observer("removed"))
        table.removeObserver(removed)
        for (_, observer) in table.observers() { observer(.status(.noDevice)) }
        #expect(calls.called == ["kept"])
        #expect(table.observers(only: removed).isEmpty)
        table.removeObserver(kept)
        #expect(table.observers().isEmpty)
    }
}

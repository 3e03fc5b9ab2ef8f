import FoundationEssentials
import GPSDCore

/// A consumer's claim on the manager's fixes. The source runs while any subscription is live; each is given
/// back exactly once (``LocationManager/unsubscribe(_:)``, or by the manager when it ends it).
package struct SubscriptionID: Hashable, Sendable, Comparable, CustomStringConvertible {
    package let rawValue: Int

    /// The delegate's continuous updates (``LocationManager/startUpdatingLocation()``).
    static let delegateUpdates = SubscriptionID(rawValue: 0)
    /// The delegate's one-shot request (``LocationManager/requestLocation()``).
    static let delegateRequest = SubscriptionID(rawValue: 1)
    /// The delegate's headings (``LocationManager/startUpdatingHeading()``).
    static let delegateHeadings = SubscriptionID(rawValue: 2)
    /// The first id handed to other consumers.
    static let firstReservable = 3

    package static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
    package var description: String { "#\(rawValue)" }
}

/// What a consumer other than the delegate (the async bridge) subscribes for.
package struct SubscriptionRequest: Sendable, Equatable {
    /// One fix, then the subscription ends: if `maximumAge` is given, gpsd is asked for the fix it holds and a
    /// fix that old or younger qualifies.
    package static func oneShot(maximumAge: Duration? = nil, desiredAccuracy: Double? = nil) -> Self {
        Self(isOneShot: true, maximumAge: maximumAge, desiredAccuracy: desiredAccuracy, distanceFilter: nil)
    }

    /// Every live fix that passes the filters, until unsubscribed or ended: each epoch as reported, or once.
    package static func continuous(
        desiredAccuracy: Double? = nil, distanceFilter: Double? = nil, delivery: EpochDelivery = .asReported
    ) -> Self {
        Self(isOneShot: false, maximumAge: nil, desiredAccuracy: desiredAccuracy, distanceFilter: distanceFilter,
             delivery: delivery)
    }

    /// Every live fix that passes the filters, and every change of the manager's status, in the order decided,
    /// the status at subscribing first: what a live timeline folds into its updates.
    package static func timeline(desiredAccuracy: Double? = nil, distanceFilter: Double? = nil) -> Self {
        Self(isOneShot: false, maximumAge: nil, desiredAccuracy: desiredAccuracy, distanceFilter: distanceFilter,
             followsStatus: true)
    }

    /// Every heading that passes `filter` (degrees from the last delivered, ``Heading/passes(headingFilter:since:)``),
    /// until unsubscribed or ended; no fixes.
    package static func headings(filter: Double?) -> Self {
        Self(isOneShot: false, maximumAge: nil, desiredAccuracy: nil, distanceFilter: nil, takesHeadings: true,
             headingFilter: filter)
    }

    package var isOneShot: Bool
    package var maximumAge: Duration?
    package var desiredAccuracy: Double?
    package var distanceFilter: Double?
    package var delivery: EpochDelivery = .asReported
    /// Whether it is told of each change of the manager's status (``SubscriptionEvent/status(_:)``).
    package var followsStatus = false
    /// Whether it takes headings (``SubscriptionEvent/heading(_:)``) instead of fixes.
    package var takesHeadings = false
    /// For headings: how many degrees one must differ from the last delivered; `nil` or 0 takes every one.
    package var headingFilter: Double?
}

/// Receives the events of its subscriptions a batch at a time: everything one decision (a read's reports, a
/// failure, a stop) means for them, in one call, never under the manager's lock. The manager queues each
/// consumer's notices in the order it decides them, under its lock, and hands them over one thread at a time: a
/// consumer gets its notices in that order, and never two batches at once. (A thread that decides notices while
/// another is handing that consumer's over leaves them to it.) Must not block.
package protocol SubscriptionConsumer: AnyObject, Sendable {
    func receive(_ notices: [SubscriptionNotice])
}

/// One event for one subscription.
package struct SubscriptionNotice: Sendable, Equatable {
    package var id: SubscriptionID
    package var event: SubscriptionEvent

    package init(id: SubscriptionID, event: SubscriptionEvent) {
        self.id = id
        self.event = event
    }
}

/// A consumer of one subscription, calling a closure for each event as it arrives.
final class HandlerConsumer: SubscriptionConsumer {
    let handler: @Sendable (SubscriptionEvent) -> Void
    init(_ handler: @escaping @Sendable (SubscriptionEvent) -> Void) { self.handler = handler }
    func receive(_ notices: [SubscriptionNotice]) { for notice in notices { handler(notice.event) } }
}

/// What the manager tells a subscription's consumer.
package enum SubscriptionEvent: Sendable, Equatable {
    /// A fix that passed the subscription's filters. A one-shot subscription has ended with it.
    case location(Location)
    /// The manager ended the subscription: its source failed (the error), a recording ended (`nil` for a
    /// continuous subscription; ``LocationError/Code/locationUnknown`` with the best fix seen for a one-shot),
    /// or its consumer stopped (`nil`, after what the subscription held back).
    case ended(LocationError?)
    /// A continuous subscription's desired accuracy has rejected every fix for the manager's stale timeout.
    case rejected(FixRejection)
    /// After ``rejected(_:)``: a fix met the accuracy again (one its distance filter holds back, too), or the fixes
    /// stopped (the session ended): the rejection is over.
    case rejectionEnded
    /// The manager's status changed (for a subscription that follows it: a live timeline).
    case status(LocationStatus)
    /// A heading that passed the subscription's filter (for a subscription that takes headings), or any heading
    /// (for a live timeline, which carries the newest).
    case heading(Heading)
    /// For a live timeline: no heading came for the manager's stale timeout (`true`), or one came again after
    /// that (`false`).
    case headingSilence(Bool)
}

/// A live subscription that was given back: what it had seen.
package struct EndedSubscription: Sendable {
    /// The best fix that did not meet the subscription's accuracy, if any.
    package var best: Location?
    /// The newest fix gpsd held that a one-shot's maximum age refused (too old, or of unknown age), if any.
    package var refusedHeldFix: Location?
    /// The manager's status when it ended: for a request's timeout, what stood in the way.
    package var status: LocationStatus = .stopped
    /// What that status says stood in the way, in words (``LocationStatus/obstacle(lastFailure:)``); `nil` if fixes
    /// were coming.
    package var obstacle: String?
}

/// What observers of a ``LocationManager`` are told: events that do not need the source to run.
package enum ManagerEvent: Sendable, Equatable {
    /// The satellites seen and used, from gpsd's SKY reports.
    case satellites(SkyView)
    /// The manager's status changed.
    case status(LocationStatus)
    /// The source's session ended by itself: it failed (the error), or a recording ended (`nil`).
    case sessionEnded(LocationError?)
}

import GPSDCore

extension SubscriptionTable {
    /// What a heading means for the subscriptions.
    struct HeadingDelivery {
        var notifications = Notifications()
        /// Whether the delegate is called with the heading.
        var toDelegate = false
    }

    /// A heading from the session: each subscription that takes headings gets it if it passes its filter
    /// (the delegate's is ``headingFilter``), measured from the last it got.
    mutating func deliver(_ heading: Heading) -> HeadingDelivery {
        var delivery = HeadingDelivery()
        var index = subscriptions.startIndex
        while index != subscriptions.endIndex {
            defer { subscriptions.formIndex(after: &index) }
            guard subscriptions[at: index].takesHeadings else { continue }
            let filter: Double?
            switch subscriptions[at: index].consumer {
            case .delegate: filter = headingFilter
            case .consumer(_, let request): filter = request.headingFilter
            }
            guard heading.passes(headingFilter: filter, since: subscriptions[at: index].lastHeading) else { continue }
            subscriptions[at: index].lastHeading = heading
            switch subscriptions[at: index].consumer {
            case .delegate: delivery.toDelegate = true
            case .consumer(let consumer, _):
                delivery.notifications.add(.heading(heading), for: subscriptions.id(at: index), to: consumer)
            }
        }
        return delivery
    }
}

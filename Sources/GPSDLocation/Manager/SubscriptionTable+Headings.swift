import GPSDCore

extension SubscriptionTable {
    /// What a heading means for the subscriptions.
    struct HeadingDelivery {
        var notifications = Notifications()
        /// Whether the delegate is called with the heading.
        var toDelegate = false
    }

    /// A heading from the session: each subscription that takes headings gets it if it passes its filter
    /// (the delegate's is ``headingFilter``), measured from the last it got; each live timeline gets it as it is.
    mutating func deliver(_ heading: Heading) -> HeadingDelivery {
        var delivery = HeadingDelivery()
        for index in subscriptions.entries.indices {
            guard subscriptions.entries[index].takesHeadings else {
                // A live timeline carries the newest heading, whatever it is.
                if case .consumer(let consumer, let request) = subscriptions.entries[index].consumer, request.followsStatus {
                    delivery.notifications.add(.heading(heading), for: subscriptions.ids[index], to: consumer)
                }
                continue
            }
            let filter: Double?
            switch subscriptions.entries[index].consumer {
            case .delegate: filter = headingFilter
            case .consumer(_, let request): filter = request.headingFilter
            }
            guard heading.passes(headingFilter: filter, since: subscriptions.entries[index].lastHeading) else { continue }
            subscriptions.entries[index].lastHeading = heading
            switch subscriptions.entries[index].consumer {
            case .delegate: delivery.toDelegate = true
            case .consumer(let consumer, _):
                delivery.notifications.add(.heading(heading), for: subscriptions.ids[index], to: consumer)
            }
        }
        return delivery
    }
}

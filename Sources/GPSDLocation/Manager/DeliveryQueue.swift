import GPSDCore

/// Deliveries decided under a lock and made outside it, in the order they were decided, whichever threads
/// decided them: the geofence monitor's subscribers (``GeofenceMonitor``). (The manager's consumers have
/// hand-overs of their own in ``ManagerStorage``, and its delegate an outbox, ``DelegateOutbox``.)
///
/// Two ways to drain it. One item at a time (``popFirst()``), by a serial consumer that was told once for each
/// item queued. Or by one thread at a time: the thread that queues items and finds nobody delivering claims the
/// queue (``claim()``) and takes batches (``takeAll()``) until none is left; items other threads queue meanwhile
/// go to it, so they are never delivered out of order or at once.
struct DeliveryQueue<Item> {
    private var items: [Item] = []
    private var head = 0
    /// Whether a thread has claimed the queue and is delivering.
    private(set) var isClaimed = false

    var isEmpty: Bool { head == items.count }

    /// How many items wait.
    var count: Int { items.count - head }

    mutating func append(_ item: Item) {
        items.append(item)
    }

    mutating func append(contentsOf newItems: some Sequence<Item>) {
        items.append(contentsOf: newItems)
    }

    /// The oldest item not yet delivered, if any.
    mutating func popFirst() -> Item? {
        guard head < items.count else { return nil }
        defer {
            head += 1
            if head == items.count {
                items.removeAll(keepingCapacity: true)
                head = 0
            }
        }
        return items[head]
    }

    /// Claims the delivery for the caller if items wait and nobody else is delivering; whether it did.
    mutating func claim() -> Bool {
        guard !isClaimed, !isEmpty else { return false }
        isClaimed = true
        return true
    }

    /// For the thread that claimed the queue: every item queued so far, oldest first; or `nil` when there are none,
    /// and the claim ends (the next items go to whichever thread claims them).
    mutating func takeAll() -> [Item]? {
        guard !isEmpty else {
            isClaimed = false
            return nil
        }
        // The items are handed over whole: keeping their capacity would only copy them, as the caller holds them.
        let taken = head == 0 ? items : Array(items[head...])
        items = []
        head = 0
        return taken
    }
}

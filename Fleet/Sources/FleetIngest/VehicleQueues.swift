import FleetCore

/// Which queues each vehicle's fixes come from, and when they last came (the ingest's monotonic time, never the
/// fixes' own): it tells a vehicle whose queue was made again (a new identity, its numbers from 1 again; an SD card
/// replaced) from two uplinks running as one vehicle at once, which both send. A value, tested as one.
struct VehicleQueues: Sendable {
    typealias Instant = ContinuousClock.Instant

    /// What a fix's arrival is news of.
    enum Notice: Sendable, Equatable {
        /// `vehicle`'s fixes come from a queue not seen before, the previous one quiet: it was made again.
        case newQueue(vehicle: VehicleID, queue: String, previous: String)
        /// `vehicle`'s fixes come from two queues at once: two uplinks run as that vehicle. Told once per pair.
        case twoUplinks(vehicle: VehicleID, queues: [String])
    }

    /// A queue quiet for longer than this is forgotten (but for each vehicle's newest, to name in a notice); two
    /// queues take turns "at once" only within it.
    let window: Duration
    private var seen: [VehicleID: [String: Seen]] = [:]
    private var told: Set<[String]> = []

    private struct Seen: Sendable {
        var last: ContinuousClock.Instant
    }

    init(window: Duration = .seconds(60)) {
        self.window = window
    }

    /// A fix of `vehicle` from `queue` ('' for a payload without one) arrived `now`.
    ///
    /// A queue not seen before is news (``Notice/newQueue(vehicle:queue:previous:)``) when the vehicle had another.
    /// Two queues are two uplinks once they take turns: a queue sends again after another has sent since its own
    /// last fix. A queue made again never does: its old queue is gone.
    mutating func saw(_ vehicle: VehicleID, queue: String, now: Instant) -> Notice? {
        var queues = seen[vehicle, default: [:]]
        defer { seen[vehicle] = pruned(queues, now: now) }
        guard let this = queues[queue] else {
            let previous = queues.max { $0.value.last < $1.value.last }?.key
            queues[queue] = Seen(last: now)
            return previous.map { .newQueue(vehicle: vehicle, queue: queue, previous: $0) }
        }
        queues[queue] = Seen(last: now)
        for other in queues.filter({ $0.key != queue && $0.value.last > this.last }).keys.sorted() {
            let pair = [other, queue].sorted()
            if told.insert([vehicle.rawValue] + pair).inserted { return .twoUplinks(vehicle: vehicle, queues: pair) }
        }
        return nil
    }

    /// The queues seen within the window, and the newest of the others.
    private func pruned(_ queues: [String: Seen], now: Instant) -> [String: Seen] {
        let newest = queues.max { $0.value.last < $1.value.last }?.key
        return queues.filter { $0.key == newest || $0.value.last.duration(to: now) <= window }
    }
}

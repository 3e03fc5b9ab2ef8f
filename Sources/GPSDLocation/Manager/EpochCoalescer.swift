import FoundationEssentials
import GPSDCore
/// Turns gpsd's several TPVs per epoch into one fix per epoch, in order.
///
/// gpsd sends a TPV for each sentence of an epoch that changes something (RMC, then GGA adds altitude, …).
/// A fix is passed on when it starts a new epoch, or when a later report of the same epoch adds a value the
/// earlier one lacked. Equal fixes, and fixes of an earlier epoch that arrive late (a POLL reply overtaken by
/// the stream), are dropped. A jump back of more than `discontinuity` (a looped log, a receiver's clock
/// reset) starts over. Receivers are tracked apart, by device.
struct EpochCoalescer {
    var discontinuity: Double = 2
    private var last: [String: Location] = [:]
    /// The receivers in ``last``, in the order they were first seen.
    private var receivers: [String] = []

    /// Whether `fix` should be passed on; remembers it if so.
    mutating func accept(_ fix: Location) -> Bool {
        let key = fix.device ?? ""
        guard let previous = last[key] else {
            last[key] = fix
            receivers.append(key)
            return true
        }
        if fix == previous { return false }
        let (time, previousTime) = (fix.timestamp, previous.timestamp)
        if time == previousTime, !fix.addsInformation(to: previous) { return false }
        if time < previousTime, previousTime.timeIntervalSince(time) <= discontinuity { return false }
        last[key] = fix
        return true
    }

    mutating func reset() {
        last.removeAll()
        receivers.removeAll()
    }

    /// How many receivers it keeps apart, and whether it knows `device`'s.
    var receiverCount: Int { last.count }
    func knows(_ device: String?) -> Bool { last[device ?? ""] != nil }

    /// The receiver first seen of those it keeps.
    var oldestReceiver: String? { receivers.first }

    /// Forgets `device`'s receiver: its next fix is taken as a first one.
    mutating func forget(_ device: String) {
        guard last.removeValue(forKey: device) != nil, let index = receivers.firstIndex(of: device) else { return }
        receivers.remove(at: index)
    }
}

extension Location {
    /// Whether this fix (of the same epoch) knows something `other` does not: a value it lacked, or a
    /// better dimension.
    func addsInformation(to other: Location) -> Bool {
        if fix == .threeDimensional && other.fix == .twoDimensional { return true }
        if deviation != nil && other.deviation == nil { return true }
        // Compared one by one, not as arrays: this runs for every later report of an epoch.
        func adds(_ mine: Double?, _ theirs: Double?) -> Bool { mine != nil && theirs == nil }
        return adds(altitude, other.altitude) || adds(ellipsoidalAltitude, other.ellipsoidalAltitude)
            || adds(horizontalAccuracy, other.horizontalAccuracy) || adds(verticalAccuracy, other.verticalAccuracy)
            || adds(latitudeAccuracy, other.latitudeAccuracy) || adds(longitudeAccuracy, other.longitudeAccuracy)
            || adds(speed, other.speed) || adds(speedAccuracy, other.speedAccuracy) || adds(course, other.course)
            || adds(courseAccuracy, other.courseAccuracy) || adds(climb, other.climb)
    }
}

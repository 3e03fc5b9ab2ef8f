import GPSDLocation
import GPSDSystem
import GPSDTestSupport

/// Coordinates so many metres north and east of a centre, for scripting tracks: degrees per metre measured with
/// the package's own (Vincenty) distance over 0.01°, so at the scale of these tests (a few hundred metres) a
/// point is where the script says to well under a centimetre per 100 m.
struct Ground {
    let center: Location.Coordinate
    private let metresPerDegreeNorth: Double
    private let metresPerDegreeEast: Double

    init(center: Location.Coordinate = .init(latitude: 52.5163, longitude: 13.3777)) {
        self.center = center
        metresPerDegreeNorth =
            center.distance(from: .init(latitude: center.latitude + 0.01, longitude: center.longitude)) / 0.01
        metresPerDegreeEast =
            center.distance(from: .init(latitude: center.latitude, longitude: center.longitude + 0.01)) / 0.01
    }

    /// The coordinate `north` metres north and `east` metres east of the centre (negative: south, west).
    func coordinate(north: Double = 0, east: Double = 0) -> Location.Coordinate {
        .init(
            latitude: center.latitude + north / metresPerDegreeNorth,
            longitude: center.longitude + east / metresPerDegreeEast)
    }

    /// A fix there, accurate to `accuracy` metres (2 m, a good receiver's, unless told).
    func fix(north: Double = 0, east: Double = 0, accuracy: Double? = 2) -> Location {
        Location(coordinate: coordinate(north: north, east: east), horizontalAccuracy: accuracy)
    }

    /// A region centred `north` and `east` metres from the centre.
    func region(_ identifier: String, north: Double = 0, east: Double = 0, radius: Double) throws -> GeofenceRegion {
        try GeofenceRegion(identifier: identifier, center: coordinate(north: north, east: east), radius: radius)
    }
}

/// What a delegate was told, in order.
final class GeofenceRecorder<MonitorClock: Clock>: GeofenceMonitorDelegate
where MonitorClock.Duration == Duration {
    private let log = Locked<[GeofenceEvent<MonitorClock.Instant>]>([])
    private let reaction: (@Sendable (GeofenceMonitor<MonitorClock>, GeofenceEvent<MonitorClock.Instant>) -> Void)?

    init(reaction: (@Sendable (GeofenceMonitor<MonitorClock>, GeofenceEvent<MonitorClock.Instant>) -> Void)? = nil) {
        self.reaction = reaction
    }

    var events: [GeofenceEvent<MonitorClock.Instant>] { log.withLock { $0 } }

    func geofenceMonitor(
        _ monitor: GeofenceMonitor<MonitorClock>, didChange event: GeofenceEvent<MonitorClock.Instant>
    ) {
        log.withLock { $0.append(event) }
        reaction?(monitor, event)
    }
}

extension GeofenceEvent<ManualClock.Instant> {
    /// An expected event, decided `seconds` after the manual clock's start.
    static func expected(
        _ identifier: String, _ previousState: GeofenceState, _ state: GeofenceState, by location: Location?,
        at seconds: Int = 0, initial: Bool = false
    ) -> Self {
        Self(
            identifier: identifier, state: state, previousState: previousState, location: location,
            instant: ManualClock.Instant(offset: .seconds(seconds)), isInitial: initial)
    }
}

extension AsyncStream {
    /// Everything left in the stream, once it has ended.
    func collected() async -> [Element] {
        var elements: [Element] = []
        for await element in self { elements.append(element) }
        return elements
    }
}

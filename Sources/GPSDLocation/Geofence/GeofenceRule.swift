import GPSDCore

/// What one fix decides about one region: ``GeofenceMonitor``'s decision rule, without state.
///
/// A fix decides ``GeofenceState/inside`` when its whole accuracy circle lies within `radius - hysteresis / 2`,
/// ``GeofenceState/outside`` when its whole accuracy circle lies beyond `radius + hysteresis / 2`, and nothing
/// otherwise. A fix that cannot be true (a coordinate off the Earth, an accuracy below 0 or not a number), or is
/// less accurate than `maximumAccuracy`, decides nothing for any region. A fix without an accuracy is taken to be
/// as inaccurate as `maximumAccuracy` allows.
struct GeofenceRule: Sendable, Hashable {
    /// The width of the band around the border, in metres, where no fix decides anything.
    var hysteresis: Double
    /// The largest ``Location/horizontalAccuracy`` that still decides anything.
    var maximumAccuracy: Double

    /// The accuracy in metres the rule takes `fix` to have; `nil` if the fix decides nothing for any region.
    func accuracy(of fix: Location) -> Double? {
        let coordinate = fix.coordinate
        guard coordinate.latitude.isFinite, coordinate.longitude.isFinite, abs(coordinate.latitude) <= 90,
            abs(coordinate.longitude) <= 180
        else { return nil }
        guard let accuracy = fix.horizontalAccuracy else {
            return maximumAccuracy.isFinite ? maximumAccuracy : nil
        }
        guard accuracy.isFinite, accuracy >= 0, accuracy <= maximumAccuracy else { return nil }
        return accuracy
    }

    /// What a fix at `coordinate`, accurate to `accuracy` metres, decides for `region`: `nil` if nothing.
    func decision(for region: GeofenceRegion, at coordinate: Location.Coordinate, accuracy: Double) -> GeofenceState? {
        let distance = region.center.distance(from: coordinate)
        if distance + accuracy <= region.radius - hysteresis / 2 { return .inside }
        if distance - accuracy >= region.radius + hysteresis / 2 { return .outside }
        return nil
    }

    /// What `fix` decides for `region`: `nil` if nothing.
    func decision(for region: GeofenceRegion, at fix: Location) -> GeofenceState? {
        accuracy(of: fix).flatMap { decision(for: region, at: fix.coordinate, accuracy: $0) }
    }
}

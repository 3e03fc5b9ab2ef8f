import Foundation
import GPSDLocation
import GPSDTestSupport
import Testing

/// A delegate whose calls can be awaited, in order, as an `AsyncStream`.
final class StreamingDelegate: LocationManagerDelegate {
    enum Event: Sendable {
        case location(Location)
        case failure(LocationError)
        case status(LocationStatus)
    }

    let events: AsyncStream<Event>
    private let continuation: AsyncStream<Event>.Continuation

    init() { (events, continuation) = AsyncStream.makeStream(of: Event.self) }

    func locationManager(_ manager: LocationManager, didUpdateLocations locations: [Location]) {
        locations.forEach { continuation.yield(.location($0)) }
    }

    func locationManager(_ manager: LocationManager, didFailWithError error: any Error) {
        continuation.yield(.failure(error as! LocationError))
    }

    func locationManager(_ manager: LocationManager, didChangeStatus status: LocationStatus) {
        continuation.yield(.status(status))
    }
}

extension StreamingDelegate {
    /// Collects status changes (and fixes, and an error) until a status satisfies `last`, or an error comes.
    func collectStatuses(
        until last: (LocationStatus) -> Bool
    ) async -> (statuses: [LocationStatus], locations: [Location], error: LocationError?) {
        var (statuses, locations): ([LocationStatus], [Location]) = ([], [])
        for await event in events {
            switch event {
            case .location(let location): locations.append(location)
            case .failure(let error): return (statuses, locations, error)
            case .status(let status):
                statuses.append(status)
                if last(status) { return (statuses, locations, nil) }
            }
        }
        return (statuses, locations, nil)
    }

    /// The next fix delivered, or nil if an error or the end of the stream comes first.
    func nextLocation() async -> Location? {
        for await event in events {
            switch event {
            case .location(let location): return location
            case .failure: return nil
            case .status: continue
            }
        }
        return nil
    }

    /// Collects fixes until one has `lastTime`, or an error ends the run (which is returned with them).
    func collect(until lastTime: Date?) async -> (locations: [Location], error: LocationError?) {
        var locations: [Location] = []
        for await event in events {
            switch event {
            case .location(let location):
                locations.append(location)
                if let lastTime, case let time = location.timestamp, abs(time.timeIntervalSince(lastTime)) < 0.0005 {
                    return (locations, nil)
                }
            case .failure(let error):
                return (locations, error)
            case .status:
                break
            }
        }
        return (locations, nil)
    }
}

/// Checks that `received` is the expected track: every epoch, in order, and each epoch's last fix with the
/// log's values. With `refinements`, an epoch may be delivered again when a later report of it adds a value
/// (gpsd's first TPV of an epoch can lack what a later sentence brings); without, each epoch comes once.
func expectTrack(
    _ received: [Location], equals expected: [ExpectedFix], refinements: Bool = false,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    var epochs: [[Location]] = []
    for fix in received {
        if let last = epochs.last?.last, last.timestamp == fix.timestamp {
            epochs[epochs.count - 1].append(fix)
        } else {
            epochs.append([fix])
        }
    }
    #expect(epochs.map { GPSDTime.string(from: $0[0].timestamp) ?? "no time" } == expected.map(\.time),
            "every epoch, in order", sourceLocation: sourceLocation)
    for epoch in epochs where epoch.count > 1 {
        #expect(refinements, "epoch \(epoch[0].timestamp as Any) delivered \(epoch.count) times", sourceLocation: sourceLocation)
        for (earlier, later) in zip(epoch, epoch.dropFirst()) {
            #expect(later.addsValue(to: earlier), "a repeat of an epoch adds a value: \(earlier) → \(later)",
                    sourceLocation: sourceLocation)
        }
    }
    for (epoch, want) in zip(epochs, expected) {
        let fix = epoch[epoch.count - 1]
        #expect(abs(fix.coordinate.latitude - want.latitude) < 1e-6, "\(want.time) latitude", sourceLocation: sourceLocation)
        #expect(abs(fix.coordinate.longitude - want.longitude) < 1e-6, "\(want.time) longitude", sourceLocation: sourceLocation)
        #expect(fix.fix == (want.mode == 3 ? .threeDimensional : .twoDimensional), "\(want.time) fix", sourceLocation: sourceLocation)
        if let altitude = want.altitudeMSL, want.mode == 3 {
            #expect(fix.altitude.map { abs($0 - altitude) < 1e-3 } == true, "\(want.time) altitude \(fix.altitude as Any)", sourceLocation: sourceLocation)
        } else {
            #expect(fix.altitude == nil, "\(want.time) has no altitude", sourceLocation: sourceLocation)
        }
        if let speed = want.speed {
            #expect(fix.speed.map { abs($0 - speed) < 1e-3 } == true, "\(want.time) speed \(fix.speed as Any)", sourceLocation: sourceLocation)
        }
        if let course = want.course {
            #expect(fix.course.map { abs($0 - course) < 1e-6 } == true, "\(want.time) course \(fix.course as Any)", sourceLocation: sourceLocation)
        }
    }
}

extension Location {
    /// Whether this fix has a value `other` lacks, or a better dimension (what makes a repeat worth sending).
    func addsValue(to other: Location) -> Bool {
        if fix == .threeDimensional && other.fix == .twoDimensional { return true }
        let pairs: [(Double?, Double?)] = [
            (altitude, other.altitude), (ellipsoidalAltitude, other.ellipsoidalAltitude),
            (horizontalAccuracy, other.horizontalAccuracy), (verticalAccuracy, other.verticalAccuracy),
            (speed, other.speed), (speedAccuracy, other.speedAccuracy), (course, other.course),
            (courseAccuracy, other.courseAccuracy), (climb, other.climb),
        ]
        return pairs.contains { $0.0 != nil && $0.1 == nil }
    }
}

/// A loopback port with nothing listening on it (it was free a moment ago).
func closedPort() -> UInt16 { freeLoopbackPort() }

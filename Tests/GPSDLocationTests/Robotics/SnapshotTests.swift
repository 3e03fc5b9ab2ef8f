import Foundation
@testable import GPSDLocation
import GPSDTestSupport
import Testing

/// ``LocationManager/snapshot``: one consistent reading for a control tick, and the position it predicts between
/// fixes.
@Suite("Snapshot for a control tick")
struct SnapshotTests {
    /// A fix at (0, 0) measured `age` before `instant`, moving at `speed` m/s towards `course`.
    private static func fix(
        speed: Double?, course: Double?, accuracy: Double? = 3, measuredBefore age: Duration = .zero,
        at instant: ContinuousClock.Instant
    ) -> Location {
        var fix = Location(coordinate: .init(latitude: 0, longitude: 0), altitude: 100, horizontalAccuracy: accuracy,
                           speed: speed, course: course, climb: 1, timestamp: NMEA.Track.time(0))
        fix.arrival = .init(instant: instant, date: .now, delay: .zero)
        fix.arrival?.instant = instant - age
        return fix
    }

    private static func snapshot(_ fix: Location?, at instant: ContinuousClock.Instant, stationary: Bool = false) -> LocationSnapshot {
        LocationSnapshot(instant: instant, location: fix, locationAge: fix?.age(at: instant),
                         status: .fix(.threeDimensional, .gps), isStationary: stationary)
    }

    // MARK: Prediction, as a value

    @Test func aMovingFixIsCarriedAlongItsCourseAndItsUncertaintyGrows() throws {
        let now = ContinuousClock.now
        let fix = Self.fix(speed: 10, course: 90, at: now)
        let state = Self.snapshot(fix, at: now)
        let tick = now + .milliseconds(500)
        let pose = try state.predictedLocation(at: tick, manoeuvreAcceleration: 2)
        // 5 m east along the equator.
        #expect(abs(fix.coordinate.distance(from: pose.coordinate) - 5) < 0.01)
        #expect(abs(fix.coordinate.bearing(to: pose.coordinate) - 90) < 0.01)
        #expect(pose.elapsed == .milliseconds(500) && pose.basis == fix)
        // 3 m, plus the velocity's error over 0.5 s (1 m/s along: 10 % of 10 m/s; 10 m/s × sin 10° across),
        // plus ½ · 2 m/s² · 0.25 s².
        let along = 1.0 * 0.5, across = 10 * 0.5 * sin(10 * Double.pi / 180)
        #expect(abs(try #require(pose.horizontalAccuracy) - (3 + (along * along + across * across).squareRoot() + 0.25)) < 1e-9)
        #expect(abs(try #require(pose.altitude) - 100.5) < 1e-9, "the climb rate carries the altitude")
        let later = try state.predictedLocation(at: now + .seconds(1))
        #expect(try #require(later.horizontalAccuracy) > pose.horizontalAccuracy!, "the later, the less certain")
    }

    @Test func theTimeCountsFromWhenTheFixWasMeasuredNotWhenItArrived() throws {
        let now = ContinuousClock.now
        let late = Self.fix(speed: 4, course: 0, measuredBefore: .milliseconds(750), at: now)
        let pose = try Self.snapshot(late, at: now).predictedLocation(at: now + .milliseconds(250))
        #expect(pose.elapsed == .seconds(1))
        #expect(abs(late.coordinate.distance(from: pose.coordinate) - 4) < 0.01)
    }

    @Test func atRestOrSlowerThanNoiseThePositionStays() throws {
        let now = ContinuousClock.now
        let still = Self.fix(speed: 0.01, course: nil, at: now)
        let pose = try Self.snapshot(still, at: now).predictedLocation(at: now + .seconds(1))
        #expect(pose.coordinate == still.coordinate)
        #expect(try #require(pose.horizontalAccuracy) > 3)
        let drifting = Self.fix(speed: 0.4, course: 45, at: now)
        let parked = try Self.snapshot(drifting, at: now, stationary: true).predictedLocation(at: now + .seconds(1))
        #expect(parked.coordinate == drifting.coordinate, "a receiver judged at rest does not drift with its noise")
        #expect(parked.altitude == 100, "nor climb")
    }

    @Test func whatCannotBePredictedIsRefusedWithItsReason() {
        let now = ContinuousClock.now
        func refusal(_ fix: Location?, at instant: ContinuousClock.Instant, horizon: Duration = .seconds(2)) -> LocationSnapshot.PredictionError? {
            do {
                _ = try Self.snapshot(fix, at: now).predictedLocation(at: instant, horizon: horizon)
                return nil
            } catch { return error }
        }
        #expect(refusal(nil, at: now) == .noLocation)
        var unknown = Self.fix(speed: 1, course: 0, at: now)
        unknown.arrival?.delay = nil
        #expect(refusal(unknown, at: now) == .ageUnknown)
        #expect(refusal(Self.fix(speed: nil, course: 0, at: now), at: now) == .velocityUnknown)
        #expect(refusal(Self.fix(speed: 3, course: nil, at: now), at: now) == .velocityUnknown)
        let fresh = Self.fix(speed: 3, course: 0, at: now)
        #expect(refusal(fresh, at: now - .milliseconds(10)) == .beforeFix(.milliseconds(10)))
        #expect(refusal(fresh, at: now + .seconds(2)) == nil, "the horizon itself is allowed")
        #expect(refusal(fresh, at: now + .milliseconds(2001)) == .beyondHorizon(elapsed: .milliseconds(2001), horizon: .seconds(2)))
        #expect(refusal(fresh, at: now + .seconds(5), horizon: .seconds(10)) == nil)
        let noAccuracy = Self.fix(speed: 3, course: 0, accuracy: nil, at: now)
        #expect((try? Self.snapshot(noAccuracy, at: now).predictedLocation(at: now))?.horizontalAccuracy == nil)
    }

    // MARK: The manager's snapshot

    @Test func theSnapshotFollowsTheManager() throws {
        let rig = ManagerRig(reconnect: ReconnectPolicy(initialDelay: .seconds(1), maximumDelay: .seconds(1), jitter: 0))
        let before = rig.manager.snapshot
        #expect(before.location == nil && before.heading == nil && before.status == .stopped && before.connections == 0)
        #expect(!before.isStale && !before.isHeadingStale && !before.isStationary && before.satellites == nil)
        rig.manager.startUpdatingLocation()
        rig.source.send(.connected)
        #expect(rig.manager.snapshot.connections == 1)
        // At rest: fixes at one place, standing still, for long enough.
        for second in 0..<15 {
            rig.source.send(Location.sample(second: second, metresPerSecond: 0))
            rig.source.send(.report(.attitude(Heading(trueHeading: 180, timestamp: NMEA.Track.time(second), device: "/dev/test"), timed: false)))
            rig.source.send(.report(.sky(SatelliteCount(visible: 9, used: 7))))
            rig.clock.advance(by: .seconds(1))
        }
        let resting = rig.manager.snapshot
        #expect(resting.location == Location.sample(second: 14, metresPerSecond: 0))
        #expect(resting.locationAge == .seconds(1) && resting.headingAge == .seconds(1))
        #expect(resting.status == .fix(.threeDimensional, .gps) && !resting.isStale && !resting.isHeadingStale)
        #expect(resting.isStationary)
        #expect(resting.satellites == SatelliteCount(visible: 9, used: 7))
        #expect(resting.instant == rig.clock.arrival.instant)
        // The fix lost: the fix held is stale; the heading sensor still reports.
        rig.source.send(.report(.noFix(device: "/dev/test", time: NMEA.Track.time(15))))
        let lost = rig.manager.snapshot
        #expect(lost.isStale && lost.location == resting.location && !lost.isStationary && !lost.isHeadingStale)
        // Fixes again, without headings: the heading is stale once none came for the stale timeout, while gpsd
        // and the fixes are not.
        let timeout = Int(rig.manager.staleTimeout / .seconds(1))
        // (The last heading arrived at 14 s; it is 15 s now.)
        for second in 15..<(14 + timeout) {
            rig.source.send(Location.sample(second: second, metresPerSecond: 0))
            #expect(!rig.manager.snapshot.isHeadingStale, "\(second - 14) s after the last heading")
            rig.clock.advance(by: .seconds(1))
        }
        rig.source.send(Location.sample(second: 14 + timeout, metresPerSecond: 0))
        let silent = rig.manager.snapshot
        #expect(silent.isHeadingStale && !silent.isStale && silent.status == .fix(.threeDimensional, .gps))
        // gpsd goes and comes back: a second connection.
        rig.source.send(.failed(LocationError(.connectionLost, "lost")))
        #expect(rig.manager.snapshot.isHeadingStale && rig.manager.snapshot.isStale)
        rig.clock.advance(by: .seconds(1))
        rig.source.send(.connected)
        #expect(rig.manager.snapshot.connections == 2)
        rig.manager.stopUpdatingLocation()
    }
}

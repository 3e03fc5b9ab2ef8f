import GPSDLocation
import GPSDTestSupport
import Testing

/// `GeofenceMonitor`: scripted tracks of fixes, metres from a centre, on a manual clock. A region of radius 50 m
/// with the default hysteresis (10 m) and 2 m accurate fixes is entered at 43 m from its centre or closer
/// (43 + 2 ≤ 50 − 5) and left at 57 m or farther (57 − 2 ≥ 50 + 5).
@Suite("Geofence monitor", .timeLimit(.minutes(1)))
struct GeofenceMonitorTests {
    typealias Event = GeofenceEvent<ManualClock.Instant>

    let ground = Ground()

    @Test func theScriptedGroundIsWhereItSays() {
        let center = ground.center
        #expect(abs(center.distance(from: ground.coordinate(north: 50)) - 50) < 0.001)
        #expect(abs(center.distance(from: ground.coordinate(east: -57)) - 57) < 0.001)
        #expect(abs(center.distance(from: ground.coordinate(north: 30, east: 40)) - 50) < 0.001)
        #expect(abs(center.distance(from: ground.coordinate(north: 1000)) - 1000) < 0.01)
    }

    // MARK: Entering and leaving

    @Test func aRegionAddedBeforeAnyFixStartsUnknown() throws {
        let clock = ManualClock()
        clock.advance(by: .seconds(3))
        let monitor = GeofenceMonitor(clock: clock)
        let initial = monitor.add(try ground.region("home", radius: 50))
        #expect(initial == .expected("home", .unknown, .unknown, by: nil, at: 3, initial: true))
        #expect(monitor.state(of: "home") == .unknown)
        #expect(monitor.state(of: "elsewhere") == nil)
        #expect(monitor.regions.map(\.identifier) == ["home"])
    }

    @Test func enteringAndLeavingAreEachReportedOnce() throws {
        let clock = ManualClock()
        let monitor = GeofenceMonitor(clock: clock)
        monitor.add(try ground.region("home", radius: 50))

        let far = ground.fix(north: 200)
        #expect(monitor.process(far) == [.expected("home", .unknown, .outside, by: far)])
        #expect(monitor.process(ground.fix(north: 100)).isEmpty, "still outside: no event")
        clock.advance(by: .seconds(5))
        let arriving = ground.fix(north: 30)
        #expect(monitor.process(arriving) == [.expected("home", .outside, .inside, by: arriving, at: 5)])
        #expect(monitor.process(ground.fix()).isEmpty, "still inside: no event")
        #expect(monitor.state(of: "home") == .inside)
        clock.advance(by: .seconds(5))
        let leaving = ground.fix(east: -70)
        #expect(monitor.process(leaving) == [.expected("home", .inside, .outside, by: leaving, at: 10)])
        #expect(monitor.state(of: "home") == .outside)
    }

    @Test func jitterAcrossTheBorderWithinTheHysteresisRaisesNoEvents() throws {
        // Fixes 44 ... 56 m from the centre, alternating sides of the 50 m border, in every direction.
        let jitter = [(44.0, 0.0), (0, 56), (-45, 0), (0, -55), (44, 0), (0, 56), (-46, 0), (0, -54)]
        let track =
            [ground.fix(north: 20)] + jitter.map { ground.fix(north: $0, east: $1) }
            + [ground.fix(north: 60)] + jitter.map { ground.fix(north: $0, east: $1) }
            + [ground.fix(north: -40)] + jitter.map { ground.fix(north: $0, east: $1) }

        let monitor = GeofenceMonitor(clock: ManualClock())
        monitor.add(try ground.region("home", radius: 50))
        let events = track.flatMap { monitor.process($0) }
        #expect(events.map(\.state) == [.inside, .outside, .inside], "in at 20 m, out at 60 m, in at 40 m")
        #expect(events.map(\.location) == [track[0], track[9], track[18]])

        // The same track without hysteresis flaps with every crossing: 7 changes per round of jitter.
        let twitchy = GeofenceMonitor(clock: ManualClock(), hysteresis: 0)
        twitchy.add(try ground.region("home", radius: 50))
        let flapping = track.flatMap { twitchy.process($0) }
        #expect(flapping.count == 1 + 7 + 8 + 1 + 7)
    }

    @Test func severalRegionsOverlappingAndApartEachGetTheirEvents() throws {
        let monitor = GeofenceMonitor(clock: ManualClock())
        monitor.add(try ground.region("a", radius: 50))
        monitor.add(try ground.region("b", east: 60, radius: 50))  // overlaps a between 10 and 50 m east
        monitor.add(try ground.region("c", north: 1000, radius: 100))  // far from both

        let start = ground.fix()
        #expect(
            monitor.process(start) == [
                .expected("a", .unknown, .inside, by: start), .expected("b", .unknown, .outside, by: start),
                .expected("c", .unknown, .outside, by: start),
            ])
        let overlap = ground.fix(east: 30)
        #expect(monitor.process(overlap) == [.expected("b", .outside, .inside, by: overlap)])
        #expect(monitor.state(of: "a") == .inside && monitor.state(of: "b") == .inside)
        let onlyB = ground.fix(east: 100)
        #expect(monitor.process(onlyB) == [.expected("a", .inside, .outside, by: onlyB)])
        let atC = ground.fix(north: 1000)
        #expect(
            monitor.process(atC) == [
                .expected("b", .inside, .outside, by: atC), .expected("c", .outside, .inside, by: atC),
            ])
        #expect(monitor.process(ground.fix(north: 1000, east: 30)).isEmpty)
        #expect(monitor.regions.map(\.identifier) == ["a", "b", "c"])
    }

    // MARK: Fixes that decide nothing

    @Test func anInaccurateFixOrOneStraddlingTheBorderDecidesNothing() throws {
        let monitor = GeofenceMonitor(clock: ManualClock(), maximumAccuracy: 20)
        monitor.add(try ground.region("home", radius: 50))

        #expect(monitor.process(ground.fix(accuracy: 25)).isEmpty, "at the centre, but less accurate than 20 m")
        #expect(monitor.process(ground.fix(north: 200, accuracy: 30)).isEmpty, "far away, but less accurate than 20 m")
        #expect(monitor.state(of: "home") == .unknown)
        #expect(monitor.process(ground.fix(north: 50, accuracy: 10)).isEmpty, "on the border")
        #expect(monitor.process(ground.fix(north: 40, accuracy: 10)).isEmpty, "its circle reaches 50 m, beyond 45")
        let inside = ground.fix(north: 34, accuracy: 10)
        #expect(monitor.process(inside) == [.expected("home", .unknown, .inside, by: inside)], "its circle: 44 m")
        #expect(monitor.process(ground.fix(north: 60, accuracy: 10)).isEmpty, "its circle reaches back to 50 m")
        #expect(monitor.process(ground.fix(north: 70, accuracy: 20)).isEmpty, "its circle reaches back to 50 m")
        #expect(monitor.process(ground.fix(north: 100, accuracy: 20.5)).isEmpty, "less accurate than 20 m")
        #expect(monitor.state(of: "home") == .inside)
        let outside = ground.fix(north: 76, accuracy: 20)
        #expect(monitor.process(outside) == [.expected("home", .inside, .outside, by: outside)], "from 56 m on")
    }

    @Test func aFixWithoutAccuracyCountsAsTheLeastAccurateAccepted() throws {
        let monitor = GeofenceMonitor(clock: ManualClock(), maximumAccuracy: 20)
        monitor.add(try ground.region("home", radius: 50))
        let deepInside = ground.fix(north: 20, accuracy: nil)
        #expect(monitor.process(deepInside) == [.expected("home", .unknown, .inside, by: deepInside)])
        #expect(monitor.process(ground.fix(north: 80, accuracy: nil)).count == 1, "60 m and more: outside")
        #expect(monitor.process(ground.fix(north: 30, accuracy: nil)).isEmpty, "reaches 50 m: nothing")
        #expect(monitor.state(of: "home") == .outside)

        let acceptingAny = GeofenceMonitor(clock: ManualClock(), maximumAccuracy: .infinity)
        acceptingAny.add(try ground.region("home", radius: 50))
        #expect(acceptingAny.process(ground.fix(accuracy: nil)).isEmpty, "no accuracy and no limit: nothing")
        #expect(acceptingAny.process(ground.fix(accuracy: 2)).count == 1)
    }

    @Test func aFixThatCannotBeTrueDecidesNothing() throws {
        let monitor = GeofenceMonitor(clock: ManualClock(), maximumAccuracy: .infinity)
        monitor.add(try ground.region("home", radius: 50))
        let center = ground.center
        let impossible = [
            Location(coordinate: .init(latitude: .nan, longitude: center.longitude), horizontalAccuracy: 2),
            Location(coordinate: .init(latitude: center.latitude, longitude: .infinity), horizontalAccuracy: 2),
            Location(coordinate: .init(latitude: 95, longitude: center.longitude), horizontalAccuracy: 2),
            Location(coordinate: .init(latitude: center.latitude, longitude: 200), horizontalAccuracy: 2),
            ground.fix(accuracy: -1), ground.fix(accuracy: .nan), ground.fix(accuracy: .infinity),
        ]
        for fix in impossible { #expect(monitor.process(fix).isEmpty, "\(fix)") }
        #expect(monitor.state(of: "home") == .unknown)
    }

    // MARK: Initial states and changing the regions

    @Test func aRegionAddedAfterADecisiveFixStartsDecided() throws {
        let clock = ManualClock()
        let monitor = GeofenceMonitor(clock: clock)
        let here = ground.fix()
        #expect(monitor.process(here).isEmpty, "no regions yet")
        clock.advance(by: .seconds(2))

        #expect(
            monitor.add(try ground.region("home", radius: 50))
                == .expected("home", .unknown, .inside, by: here, at: 2, initial: true))
        #expect(
            monitor.add(try ground.region("far", north: 500, radius: 100))
                == .expected("far", .unknown, .outside, by: here, at: 2, initial: true))
        #expect(
            monitor.add(try ground.region("border", north: 50, radius: 50))
                == .expected("border", .unknown, .unknown, by: nil, at: 2, initial: true),
            "the last fix is on its border")

        // The last fix decides nothing at all: a region added now starts unknown, whatever came before.
        monitor.process(ground.fix(accuracy: 80))
        #expect(
            monitor.add(try ground.region("late", radius: 50))
                == .expected("late", .unknown, .unknown, by: nil, at: 2, initial: true))
        #expect(monitor.process(here) == [.expected("late", .unknown, .inside, by: here, at: 2)], "a change")

        // The same identifier again replaces the region in its place, with a new initial state.
        let moved = try ground.region("home", north: 500, radius: 100)
        #expect(monitor.add(moved) == .expected("home", .unknown, .outside, by: here, at: 2, initial: true))
        #expect(monitor.regions.map(\.identifier) == ["home", "far", "border", "late"])
        #expect(monitor.regions.first == moved)
    }

    @Test func aRemovedRegionReportsNothingMore() throws {
        let monitor = GeofenceMonitor(clock: ManualClock())
        monitor.add(try ground.region("home", radius: 50))
        monitor.add(try ground.region("work", north: 300, radius: 50))
        #expect(monitor.process(ground.fix()).count == 2)
        #expect(monitor.remove(identifier: "home"))
        #expect(!monitor.remove(identifier: "home"), "already gone")
        #expect(monitor.state(of: "home") == nil)
        let atWork = ground.fix(north: 300)
        #expect(monitor.process(atWork) == [.expected("work", .outside, .inside, by: atWork)], "home is not left")
        #expect(monitor.regions.map(\.identifier) == ["work"])
    }

    // MARK: Dwell

    @Test func aChangeIsReportedOnceItHasLastedTheMinimumDwell() throws {
        let clock = ManualClock()
        let monitor = GeofenceMonitor(clock: clock, minimumDwell: .seconds(10))
        monitor.add(try ground.region("home", radius: 50))
        let inside = ground.fix(), outside = ground.fix(north: 100), border = ground.fix(north: 50)

        #expect(monitor.process(inside) == [.expected("home", .unknown, .inside, by: inside)], "the first at once")
        #expect(monitor.process(outside).isEmpty, "outside since 0 s")
        clock.advance(by: .seconds(5))
        #expect(monitor.process(outside).isEmpty, "5 s")
        clock.advance(by: .seconds(4))
        #expect(monitor.process(outside).isEmpty, "9 s")
        clock.advance(by: .seconds(1))
        #expect(monitor.process(outside) == [.expected("home", .inside, .outside, by: outside, at: 10)], "10 s")

        #expect(monitor.process(inside).isEmpty, "inside since 10 s")
        clock.advance(by: .seconds(5))
        #expect(monitor.process(outside).isEmpty, "back outside: the pending entry is cancelled")
        clock.advance(by: .seconds(6))
        #expect(monitor.process(inside).isEmpty, "inside since 21 s, not 10 s")
        clock.advance(by: .seconds(5))
        #expect(monitor.process(border).isEmpty, "decides nothing, cancels nothing")
        clock.advance(by: .seconds(4))
        #expect(monitor.process(inside).isEmpty, "9 s")
        #expect(monitor.state(of: "home") == .outside)
        clock.advance(by: .seconds(1))
        #expect(monitor.process(inside) == [.expected("home", .outside, .inside, by: inside, at: 31)])
        #expect(monitor.state(of: "home") == .inside)
    }
}

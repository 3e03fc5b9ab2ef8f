import Foundation
@testable import GPSDLocation
import GPSDTestSupport
import Testing

/// Headings as a measurement of their own: an arrival and an age as a fix has, a silence a timeline can see, and a
/// magnetic heading that outlives the fix.
@Suite("Headings: ages and silence")
struct HeadingAgeTests {
    private static let timeout = Duration.seconds(5)

    // MARK: The watch, as a value

    @Test func theFirstHeadingSetsOneTimerAndSilenceComesAtTheTimeout() {
        var watch = HeadingWatch()
        let first = watch.arrived(at: .seconds(10), timeout: Self.timeout)
        let timer = first.timer
        #expect(!first.endsSilence && timer?.after == Self.timeout)
        // Headings at 50 Hz set no more timers.
        for step in 1...100 {
            #expect(watch.arrived(at: .seconds(10) + .milliseconds(20 * step), timeout: Self.timeout).timer == nil)
        }
        // The timer fires 5 s after the first: the last heading came at 12 s, so it looks again 2 s on.
        guard case .rescheduled(let next) = watch.fired(timer!.id, now: .seconds(15), timeout: Self.timeout) else {
            Issue.record("expected the watch to look again")
            return
        }
        #expect(next.after == .seconds(2) && !watch.isSilent)
        #expect(watch.fired(timer!.id, now: .seconds(15), timeout: Self.timeout) == .ignored, "a timer fires once")
        #expect(watch.fired(next.id, now: .seconds(17), timeout: Self.timeout) == .silent)
        #expect(watch.isSilent)
        let again = watch.arrived(at: .seconds(30), timeout: Self.timeout)
        #expect(again.endsSilence && again.timer != nil && !watch.isSilent)
    }

    @Test func aResetForgetsThePendingTimer() {
        var watch = HeadingWatch()
        let timer = watch.arrived(at: .zero, timeout: Self.timeout).timer!
        watch.reset(silent: false)
        #expect(watch.fired(timer.id, now: .seconds(9), timeout: Self.timeout) == .ignored)
        #expect(!watch.isSilent && watch.lastArrival == nil)
        let next = watch.arrived(at: .seconds(9), timeout: Self.timeout).timer
        #expect(next != nil && next?.id != timer.id, "a new timer, never mistaken for the old one")
    }

    @Test func aNewSessionWithAHeadingHeldStartsSilentUntilItsFirstHeading() {
        var watch = HeadingWatch()
        _ = watch.arrived(at: .zero, timeout: Self.timeout)
        watch.reset(silent: true)
        #expect(watch.isSilent)
        let first = watch.arrived(at: .seconds(3), timeout: Self.timeout)
        #expect(first.endsSilence && first.timer != nil && !watch.isSilent)
    }

    // MARK: The timeline, as a value

    /// After a reconnection the heading held is the old session's: stale until the new session sends one, however
    /// the new session's statuses go (the manager says so with a silence when it opens the session).
    @Test func aHeadingFromBeforeAReconnectionStaysStaleUntilTheNextOne() throws {
        var timeline = LiveTimeline()
        for status in [LocationStatus.connecting(attempt: 1), .connected(gpsdVersion: nil), .fix(.threeDimensional, .gps)] {
            _ = timeline.update(for: .status(status))
        }
        _ = timeline.update(for: .heading(Heading(trueHeading: 10)))
        _ = timeline.update(for: .status(.reconnecting(attempt: 1, after: .seconds(1), because: LiveTimelineTests.lost)))
        _ = timeline.update(for: .headingSilence(true))
        for status in [LocationStatus.connecting(attempt: 2), .connected(gpsdVersion: nil), .fix(.threeDimensional, .gps)] {
            let update = try LiveTimelineTests.next(&timeline, .status(status))
            #expect(update.isHeadingStale, "\(status): the old session's heading")
        }
        #expect(timeline.update(for: .heading(Heading(trueHeading: 20))) == nil, "the silence's end makes the update")
        let back = try LiveTimelineTests.next(&timeline, .headingSilence(false))
        #expect(!back.isHeadingStale && back.heading?.trueHeading == 20)
    }

    /// A timeline made during an outage, before any heading: the first heading of the new session is current.
    @Test func aTimelineMadeDuringASilenceTakesTheFirstHeadingAsCurrent() throws {
        var timeline = LiveTimeline()
        _ = timeline.update(for: .status(.connecting(attempt: 2)))
        #expect(timeline.update(for: .headingSilence(true)) == nil)
        _ = timeline.update(for: .status(.fix(.threeDimensional, .gps)))
        #expect(timeline.update(for: .heading(Heading(trueHeading: 30))) == nil)
        let update = try LiveTimelineTests.next(&timeline, .headingSilence(false))
        #expect(!update.isHeadingStale && update.heading?.trueHeading == 30)
    }

    @Test func aTimelineCarriesTheNewestHeadingAndUpdatesOnlyWhenItsConditionChanges() throws {
        var timeline = LiveTimeline()
        _ = timeline.update(for: .status(.fix(.threeDimensional, .gps)))
        _ = timeline.update(for: .location(LiveTimelineTests.fix(1)))
        let first = try LiveTimelineTests.next(&timeline, .heading(Heading(trueHeading: 10)))   // headings start
        #expect(first.heading?.trueHeading == 10 && !first.isHeadingStale && !first.isNewFix)
        #expect(timeline.update(for: .heading(Heading(trueHeading: 11))) == nil, "a heading alone makes no update")
        let fix = try LiveTimelineTests.next(&timeline, .location(LiveTimelineTests.fix(2)))
        #expect(fix.heading?.trueHeading == 11, "the next update carries the newest heading")
        let silent = try LiveTimelineTests.next(&timeline, .headingSilence(true))
        #expect(silent.isHeadingStale && !silent.isStale && silent.heading?.trueHeading == 11)
        #expect(silent.description.contains("heading stale"))
        #expect(timeline.update(for: .heading(Heading(trueHeading: 12))) == nil)
        let back = try LiveTimelineTests.next(&timeline, .headingSilence(false))
        #expect(!back.isHeadingStale && back.heading?.trueHeading == 12)
        for status in [LocationStatus.deviceGone(device: nil), .stale(silentFor: .seconds(5)), .stopped,
                       .reconnecting(attempt: 1, after: .seconds(1), because: LiveTimelineTests.lost)] {
            let update = try LiveTimelineTests.next(&timeline, .status(status))
            #expect(update.isHeadingStale, "\(status)")
        }
        let lost = try LiveTimelineTests.next(&timeline, .status(.fixLost))
        #expect(!lost.isHeadingStale,
                "a lost fix leaves a heading sensor reporting")
    }

    @Test func withoutAHeadingNothingIsHeadingStale() throws {
        var timeline = LiveTimeline()
        #expect(timeline.update(for: .headingSilence(true)) == nil)
        let update = try LiveTimelineTests.next(&timeline, .status(.stale(silentFor: .seconds(5))))
        #expect(update.heading == nil && !update.isHeadingStale)
    }

    // MARK: The manager

    @Test func aHeadingWithATimeOfItsOwnIsAgedByItsReceiversClockAsAFixIs() throws {
        let rig = ManagerRig()
        rig.manager.startUpdatingLocation()
        rig.source.send(.connected)
        rig.clock.advance(by: .seconds(1))
        rig.source.send(Location.sample(second: 1))   // the receiver's second 1 arrives now: no delay
        // A heading the receiver measured in the same second (its ATT has that time: u-blox's, gpsd 3.25's from
        // binary receivers), 300 ms later.
        rig.clock.advance(by: .milliseconds(300))
        rig.source.send(.report(.attitude(Heading(trueHeading: 46.5, timestamp: NMEA.Track.time(1), device: "/dev/test"),
                                          timed: true)))
        // Within a microsecond: the clock's relation is kept in seconds as a Double.
        func milliseconds(_ duration: Duration?) throws -> Double { try #require(duration) / .milliseconds(1) }
        let heading = try #require(rig.manager.heading)
        #expect(abs(try milliseconds(heading.arrival?.delay) - 300) < 1e-3)
        rig.clock.advance(by: .milliseconds(200))
        let snapshot = rig.manager.snapshot
        #expect(abs(try milliseconds(snapshot.headingAge) - 500) < 1e-3)
        #expect(try milliseconds(snapshot.locationAge) == 500)
        // A heading without any time is as old as its arrival.
        rig.source.send(.report(.attitude(Heading(trueHeading: 50, device: "/dev/test"), timed: false)))
        let untimed = try #require(rig.manager.heading)
        #expect(untimed.arrival?.instant == rig.clock.arrival.instant && untimed.arrival?.delay == .zero)
        #expect(untimed == Heading(trueHeading: 50, device: "/dev/test"), "the arrival is not part of equality")
        rig.manager.stopUpdatingLocation()
    }

    // MARK: The manager, on what gpsd 3.22 sends

    /// gpsd 3.22's reports for the epoch of receiver second `second` of `NMEA.Track` from `/dev/pts/1`: its TPV, and
    /// the ATT of its `$GPHDT`, which has no time.
    static func tpv(_ second: Int) -> String {
        #"{"class":"TPV","device":"/dev/pts/1","mode":3,"time":"\#(GPSDTime.string(from: NMEA.Track.time(second))!)","#
            + #""lat":52.5,"lon":13.4,"altHAE":51.5,"altMSL":34.5,"alt":34.5,"track":90.0,"magvar":4.1,"speed":3.0,"eph":19.0}"#
    }
    static let att = #"{"class":"ATT","device":"/dev/pts/1","heading":46.500}"#

    /// Decodes gpsd's `lines` as a session does, and sends them to `rig`'s session.
    static func send(_ lines: [String], to rig: ManagerRig, with decoder: ReportDecoder) {
        for line in lines {
            if let report = decoder.decode(Array(line.utf8)) { rig.source.send(.report(report)) }
        }
    }

    @Test("gpsd 3.22's heading, 820 ms after its epoch's TPV, is as old as its arrival, not its epoch's fix")
    func gpsd322sHeadingIsAsOldAsItsArrival() throws {
        let rig = ManagerRig()
        let decoder = try ReportDecoder()
        rig.manager.startUpdatingLocation()
        rig.source.send(.connected)
        for second in 0...3 {
            Self.send([Self.tpv(second)], to: rig, with: decoder)
            rig.clock.advance(by: .milliseconds(820))
            Self.send([Self.att], to: rig, with: decoder)
            let heading = try #require(rig.manager.heading)
            #expect(heading.timestamp == NMEA.Track.time(second), "its epoch's time")
            #expect(heading.arrival?.delay == .zero, "second \(second): \(String(describing: heading.arrival))")
            #expect(rig.manager.snapshot.headingAge == .zero)
            rig.clock.advance(by: .milliseconds(180))
            let snapshot = rig.manager.snapshot
            #expect(snapshot.headingAge == .milliseconds(180) && snapshot.locationAge == .seconds(1))
        }
        rig.manager.stopUpdatingLocation()
    }

    @Test("a receiver removed for 11 s and added again: its fresh headings are fresh, and no age says stale when the flag does not")
    func aReaddedReceiversHeadingsAreFresh() throws {
        let rig = ManagerRig()
        let decoder = try ReportDecoder()
        rig.manager.startUpdatingLocation()
        rig.source.send(.connected)
        let timeout = rig.manager.staleTimeout
        var disagreements: [String] = []
        /// Reads the snapshot every 100 ms for `duration`, noting where the heading's age says stale and the flag
        /// does not.
        func tick(for duration: Duration) {
            for _ in 0..<Int(duration / .milliseconds(100)) {
                rig.clock.advance(by: .milliseconds(100))
                let snapshot = rig.manager.snapshot
                if let age = snapshot.headingAge, age >= timeout, !snapshot.isHeadingStale {
                    disagreements.append("\(rig.clock.now): age \(age), not stale, \(snapshot.status)")
                }
            }
        }
        Self.send([#"{"class":"DEVICES","devices":[{"class":"DEVICE","path":"/dev/pts/1"}]}"#], to: rig, with: decoder)
        for second in 0...4 {
            Self.send([Self.tpv(second)], to: rig, with: decoder)
            tick(for: .milliseconds(200))
            Self.send([Self.att], to: rig, with: decoder)
            tick(for: .milliseconds(800))
        }
        // gpsd's control socket takes the receiver away, and 11 s later gives it back: its first reports are
        // headings, before the first fix of its new cycle.
        Self.send([#"{"class":"DEVICE","path":"/dev/pts/1","activated":0}"#], to: rig, with: decoder)
        tick(for: .seconds(11))
        Self.send([#"{"class":"DEVICE","path":"/dev/pts/1","activated":"2025-06-01T12:00:16.000Z","driver":"NMEA0183"}"#],
                  to: rig, with: decoder)
        tick(for: .milliseconds(500))
        for _ in 0..<2 {
            Self.send([Self.att], to: rig, with: decoder)
            let snapshot = rig.manager.snapshot
            #expect(snapshot.heading?.timestamp == nil, "not the time of a fix from before the receiver went")
            #expect(snapshot.headingAge == .zero && !snapshot.isHeadingStale, "\(snapshot)")
            tick(for: .seconds(1))
        }
        Self.send([Self.tpv(18)], to: rig, with: decoder)
        tick(for: .milliseconds(200))
        Self.send([Self.att], to: rig, with: decoder)
        #expect(rig.manager.heading?.timestamp == NMEA.Track.time(18))
        tick(for: .seconds(1))
        #expect(disagreements.isEmpty, "\(disagreements.count): \(disagreements.prefix(5))")
        rig.manager.stopUpdatingLocation()
    }

    @Test("a heading with a time of its own, held in gpsd past the stale timeout, is stale as soon as it arrives")
    func aHeadingMeasuredLongAgoIsStale() throws {
        let rig = ManagerRig()
        let decoder = try ReportDecoder()
        rig.manager.startUpdatingLocation()
        rig.source.send(.connected)
        for second in 0...9 {
            Self.send([Self.tpv(second)], to: rig, with: decoder)
            rig.clock.advance(by: .seconds(1))
        }
        // gpsd 3.25's ATT from a binary receiver, measured at second 3, arriving at 10 s: 7 s old.
        let time = GPSDTime.string(from: NMEA.Track.time(3))!
        Self.send([#"{"class":"ATT","device":"/dev/pts/1","time":"\#(time)","heading":46.500}"#], to: rig, with: decoder)
        let snapshot = rig.manager.snapshot
        let age = try #require(snapshot.headingAge)
        #expect(abs(age.timeInterval - 7) < 0.001)
        #expect(snapshot.isHeadingStale, "\(snapshot)")
        rig.manager.stopUpdatingLocation()
    }

    @Test(.timeLimit(.minutes(1)))
    func aTimelineSaysWhenHeadingsStopWhileFixesGoOn() async throws {
        let rig = AsyncRig()
        rig.gps.manager.staleTimeout = .seconds(5)
        let updates = rig.gps.liveUpdates(bufferingPolicy: .unbounded)
        await rig.source.waitForOpening()
        rig.source.send(.connected)
        // Second s's fix arrives at s - 1 s; headings come with the first two seconds' fixes only.
        for second in 1...8 {
            rig.source.send(Location.sample(second: second))
            if second <= 2 {
                rig.source.send(.report(.attitude(Heading(trueHeading: Double(second * 10), timestamp: NMEA.Track.time(second)), timed: false)))
            }
            rig.managerClock.advance(by: .seconds(1))
        }
        rig.source.send(.report(.attitude(Heading(trueHeading: 90, timestamp: NMEA.Track.time(9)), timed: false)))
        var seen: [String] = []
        for try await update in updates {
            guard let heading = update.heading else { continue }
            seen.append((update.isNewFix ? "fix " : "condition ") + "\(Int(heading.trueHeading))"
                        + (update.isHeadingStale ? " stale" : ""))
            if heading.trueHeading == 90 { break }
        }
        #expect(seen == [
            "condition 10",   // headings start
            "fix 10", "fix 20", "fix 20", "fix 20", "fix 20",
            // The last heading came at 1 s: at 6 s, with fixes still coming, it is stale, until the next.
            "condition 20 stale", "fix 20 stale", "fix 20 stale",
            "condition 90",
        ])
    }
}

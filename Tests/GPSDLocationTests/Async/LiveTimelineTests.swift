import Foundation
@testable import GPSDLocation
import GPSDTestSupport
import Testing

/// The live timeline as a value: the subscription's events, in order, and the updates they make.
@Suite("The live timeline as a value")
struct LiveTimelineTests {
    static let lost = LocationError(.connectionLost, "connection to gpsd at localhost:2947 lost")

    /// A fix of second `second` at rest at (0, 0), as accurate as `accuracy`.
    static func fix(_ second: Int, accuracy: Double = 5, speed: Double = 0) -> Location {
        var fix = Location.sample(second: second, metresPerSecond: 0)
        fix.horizontalAccuracy = accuracy
        fix.speed = speed
        return fix
    }

    struct NoUpdate: Error {}

    /// The update `event` makes; throws if it makes none.
    static func next(_ timeline: inout LiveTimeline, _ event: SubscriptionEvent) throws -> LocationUpdate {
        guard let update = timeline.update(for: event) else { throw NoUpdate() }
        return update
    }

    @Test func theStatusAtSubscribingComesFirstWithoutALocation() throws {
        var timeline = LiveTimeline()
        let update = try Self.next(&timeline, .status(.connecting(attempt: 1)))
        #expect(update.location == nil && !update.isNewFix && update.status == .connecting(attempt: 1))
        #expect(update.locationUnavailable && !update.isStale && !update.sourceRestarted && !update.isStationary)
    }

    @Test func aFixIsANewLocationAndAvailableOnceTheStatusSaysFixes() throws {
        var timeline = LiveTimeline()
        _ = timeline.update(for: .status(.waitingForFix(satellites: nil)))
        let early = try Self.next(&timeline, .location(Self.fix(1)))
        #expect(early.isNewFix && early.location == Self.fix(1))
        #expect(early.locationUnavailable, "the status still says waiting: it comes right after, in the order decided")
        let status = try Self.next(&timeline, .status(.fix(.threeDimensional, .gps)))
        #expect(!status.isNewFix && status.location == Self.fix(1) && !status.locationUnavailable && !status.isStale)
    }

    @Test("isNewFix is true once an epoch: a later report that completes it updates the location, as the same epoch")
    func aLaterReportOfTheEpochIsNotANewFix() throws {
        var timeline = LiveTimeline()
        _ = timeline.update(for: .status(.fix(.twoDimensional, .gps)))
        var first = Self.fix(1)
        first.fix = .twoDimensional
        first.altitude = nil
        let early = try Self.next(&timeline, .location(first))
        var completed = first
        completed.fix = .threeDimensional
        completed.altitude = 34
        let later = try Self.next(&timeline, .location(completed))
        let next = try Self.next(&timeline, .location(Self.fix(2)))
        #expect([early.isNewFix, later.isNewFix, next.isNewFix] == [true, false, true])
        #expect(later.location == completed, "the epoch's most complete record is the location")
        var otherReceiver = Self.fix(2)
        otherReceiver.device = "/dev/other"
        #expect(try Self.next(&timeline, .location(otherReceiver)).isNewFix, "another receiver's epoch is its own")
    }

    /// Whether the timeline judges rest after each of `seconds` fixes at rest with no speed (as gpsd sends for a
    /// receiver whose speed it cannot vouch for).
    static func stationary(_ timeline: inout LiveTimeline, seconds: Range<Int>) throws -> [Bool] {
        _ = timeline.update(for: .status(.fix(.threeDimensional, .gps)))
        return try seconds.map { second in
            var fix = Self.fix(second)
            fix.speed = nil
            return try Self.next(&timeline, .location(fix)).isStationary
        }
    }

    @Test("rest without a certain speed: 10 receiver-seconds by default, the configured dwell otherwise")
    func stationaryDetectionTakesItsConfiguration() throws {
        var byDefault = LiveTimeline()
        let judged = try Self.stationary(&byDefault, seconds: 0..<12)
        #expect(judged == Array(repeating: false, count: 10) + [true, true], "stationary from the fix 10 s after the first")
        var quick = StationaryDetector.Configuration()
        quick.positionOnlyDwell = 2
        var configured = LiveTimeline(stationary: quick)
        #expect(try Self.stationary(&configured, seconds: 0..<4) == [false, false, true, true])
    }

    @Test func aLostFixLeavesTheLastLocationStaleAndUnavailable() throws {
        var timeline = LiveTimeline()
        _ = timeline.update(for: .status(.fix(.threeDimensional, .gps)))
        _ = timeline.update(for: .location(Self.fix(1)))
        for status in [LocationStatus.fixLost, .deviceGone(device: "/dev/test"), .stale(silentFor: .seconds(5)),
                       .reconnecting(attempt: 2, after: .seconds(1), because: Self.lost)] {
            let update = try Self.next(&timeline, .status(status))
            #expect(update.location == Self.fix(1) && update.isStale && update.locationUnavailable, "\(status)")
        }
    }

    @Test func aSecondConnectionIsARestartOnce() throws {
        var timeline = LiveTimeline()
        let first: [LocationStatus] = [.connecting(attempt: 1), .connected(gpsdVersion: nil), .connected(gpsdVersion: "3.22")]
        #expect(first.compactMap { timeline.update(for: .status($0))?.sourceRestarted } == [false, false, false])
        _ = timeline.update(for: .location(Self.fix(1)))
        let again: [LocationStatus] = [
            .reconnecting(attempt: 2, after: .seconds(1), because: Self.lost), .connecting(attempt: 2),
            .connected(gpsdVersion: nil), .connected(gpsdVersion: "3.22"), .waitingForFix(satellites: nil),
        ]
        #expect(again.compactMap { timeline.update(for: .status($0))?.sourceRestarted } == [false, false, true, false, false])
    }

    @Test func aTimelineThatSubscribedMidSessionSeesTheNextConnectionAsARestart() throws {
        var timeline = LiveTimeline()
        _ = timeline.update(for: .status(.fix(.threeDimensional, .gps)))   // the status at subscribing
        _ = timeline.update(for: .location(Self.fix(1)))
        let again: [LocationStatus] = [
            .reconnecting(attempt: 2, after: .seconds(1), because: Self.lost), .connecting(attempt: 2),
            .connected(gpsdVersion: nil),
        ]
        #expect(again.compactMap { timeline.update(for: .status($0))?.sourceRestarted } == [false, false, true])
    }

    @Test func theFixOfAnEarlierSessionIsStaleUntilANewOneComes() throws {
        var timeline = LiveTimeline()
        _ = timeline.update(for: .status(.fix(.threeDimensional, .gps)))
        _ = timeline.update(for: .location(Self.fix(1)))
        _ = timeline.update(for: .status(.stale(silentFor: .seconds(5))))
        let back = try Self.next(&timeline, .status(.fix(.threeDimensional, .gps)))
        #expect(back.isStale && !back.locationUnavailable, "gpsd speaks again, but the fix held is from before")
        let fresh = try Self.next(&timeline, .location(Self.fix(9)))
        #expect(!fresh.isStale)
    }

    @Test func theEndOfARejectionEndsTheStalenessWithoutAFix() throws {
        var timeline = LiveTimeline()
        _ = timeline.update(for: .status(.fix(.threeDimensional, .gps)))
        _ = timeline.update(for: .location(Self.fix(1)))
        let rejection = FixRejection(desiredAccuracy: 10, best: Self.fix(9, accuracy: 17.2), duration: .seconds(5))
        _ = timeline.update(for: .rejected(rejection))
        // A fix met the accuracy again, but the distance filter held it back: no fix comes, the rejection ends.
        let over = try Self.next(&timeline, .rejectionEnded)
        #expect(!over.isStale && over.rejection == nil)
    }

    @Test func aRejectionMakesTheLocationStaleUntilAFixPasses() throws {
        var timeline = LiveTimeline()
        _ = timeline.update(for: .status(.fix(.threeDimensional, .gps)))
        _ = timeline.update(for: .location(Self.fix(1)))
        let rejection = FixRejection(desiredAccuracy: 10, best: Self.fix(9, accuracy: 17.2), duration: .seconds(5))
        let rejected = try Self.next(&timeline, .rejected(rejection))
        #expect(rejected.isStale && !rejected.locationUnavailable && rejected.rejection == rejection)
        #expect(rejected.location == Self.fix(1), "the last fix that passed, not the best rejected")
        let passed = try Self.next(&timeline, .location(Self.fix(12)))
        #expect(!passed.isStale && passed.rejection == nil)
    }

    @Test func restingFixesBecomeStationaryAndALostFixForgetsIt() throws {
        var timeline = LiveTimeline()
        _ = timeline.update(for: .status(.fix(.threeDimensional, .gps)))
        let updates = (0..<30).compactMap { timeline.update(for: .location(Self.fix($0))) }
        let atRest = updates.map(\.isStationary)
        let firstAtRest = try #require(atRest.firstIndex(of: true), "30 s at rest")
        #expect(!atRest[firstAtRest...].contains(false), "it stays at rest")
        let lost = try Self.next(&timeline, .status(.fixLost))
        #expect(!lost.isStationary)
    }

    @Test func theEndMakesNoUpdate() {
        var timeline = LiveTimeline()
        #expect(timeline.update(for: .ended(nil)) == nil)
        #expect(timeline.update(for: .ended(Self.lost)) == nil)
    }
}

/// `AsyncLocationManager.liveUpdates()` on a scripted source: one sequence of fixes and conditions in the order
/// the manager decided them.
@Suite("Async live updates", .timeLimit(.minutes(1)))
struct AsyncLiveUpdatesTests {
    @Test func fixesAndStatusComeInOneSequenceInOrder() async throws {
        let rig = AsyncRig(reconnect: ReconnectPolicy(initialDelay: .seconds(1), maximumDelay: .seconds(1), jitter: 0))
        let updates = rig.gps.liveUpdates()
        await rig.source.waitForOpening()
        rig.source.send(.connected)
        rig.source.send(.report(.version("3.22")))
        rig.source.send(Location.sample(second: 1))
        rig.source.send(.report(.noFix(device: "/dev/test", time: nil)))
        rig.source.send(.failed(LocationError(.connectionLost, "lost")))
        rig.managerClock.advance(by: .seconds(1))
        await rig.source.waitForOpening(count: 2)
        rig.source.send(.connected)
        rig.source.send(Location.sample(second: 5))
        var seen: [String] = []
        for try await update in updates {
            var line = update.isNewFix ? "fix \(Int(update.location!.timestamp.timeIntervalSince1970) - 1_748_779_200)" : update.status.name
            if update.isStale { line += " stale" }
            if update.sourceRestarted { line += " restarted" }
            seen.append(line)
            if seen.count == 11 { break }
        }
        #expect(seen == [
            // It starts with the session it opens, never `stopped`; the status says fixes are coming, then the
            // fix that says it comes, as decided.
            "connecting", "connected", "connected", "fix", "fix 1", "fixLost stale", "reconnecting stale",
            "connecting stale", "connected stale restarted", "fix stale", "fix 5",
        ])
    }

    @Test("a timeline starts with the status it is in: the session it opens, or the one running")
    func aTimelineStartsWithTheStatusItIsIn() async throws {
        let rig = AsyncRig()
        let first = rig.gps.liveUpdates()
        await rig.source.waitForOpening()
        rig.source.send(.connected)
        rig.source.send(.report(.device(path: "/dev/test", active: false)))
        let second = rig.gps.liveUpdates()
        var firstStatuses: [LocationStatus] = []
        for try await update in first {
            firstStatuses.append(update.status)
            if firstStatuses.count == 3 { break }
        }
        #expect(firstStatuses == [.connecting(attempt: 1), .connected(gpsdVersion: nil), .deviceGone(device: "/dev/test")])
        var iterator = second.makeAsyncIterator()
        let start = try await iterator.next()
        #expect(start?.status == .deviceGone(device: "/dev/test") && start?.isNewFix == false)
    }

    @Test func aTimelineJudgesRestByTheManagersStationaryDetection() async throws {
        let rig = AsyncRig()
        rig.gps.manager.stationaryDetection.positionOnlyDwell = 2
        let updates = rig.gps.liveUpdates()
        rig.gps.manager.stationaryDetection.positionOnlyDwell = 60   // taken when the timeline was made
        await rig.source.waitForOpening()
        rig.source.send(.connected)
        for second in 0..<4 {
            var fix = Location.sample(second: second, metresPerSecond: 0)
            fix.speed = nil
            rig.source.send(fix)
        }
        var judged: [Bool] = []
        for try await update in updates where update.isNewFix {
            judged.append(update.isStationary)
            if judged.count == 4 { break }
        }
        #expect(judged == [false, false, true, true])
    }

    @Test func aTimelineFilteredToSilenceIsToldWhyOnce() async throws {
        let rig = AsyncRig()
        rig.gps.manager.staleTimeout = .seconds(5)
        let updates = rig.gps.liveUpdates(desiredAccuracy: 10)
        await rig.source.waitForOpening()
        rig.source.send(.connected)
        for second in 0..<10 {
            var fix = Location.sample(second: second)
            fix.horizontalAccuracy = second == 3 ? 17.2 : 23
            rig.source.send(fix)
            rig.managerClock.advance(by: .seconds(1))
        }
        var good = Location.sample(second: 10)
        good.horizontalAccuracy = 4
        rig.source.send(good)
        var rejections: [FixRejection] = []
        for try await update in updates {
            // No fix has passed: there is no location to be stale, only the rejection to say why.
            if let rejection = update.rejection { rejections.append(rejection) }
            if update.location == good { break }
        }
        let rejection = try #require(rejections.first)
        #expect(Set(rejections) == [rejection], "told once, carried until a fix passes")
        #expect(rejection.desiredAccuracy == 10 && rejection.best.horizontalAccuracy == 17.2)
        #expect(rejection.duration == .seconds(5))
        #expect(rejection.description == "no fix within 10.0 m for 5 s: the best was ±17.2 m")
    }

    @Test func theEndOfARecordingEndsTheTimelineAndAFailureThrows() async throws {
        let rig = AsyncRig()
        let updates = rig.gps.liveUpdates()
        await rig.source.waitForOpening()
        rig.source.send([.connected, .report(.fix(Location.sample(second: 1))), .failed(LocationError(.protocolError, "bad"))])
        var last: LocationUpdate?
        await #expect(throws: LocationError.self) {
            for try await update in updates { last = update }
        }
        #expect(last?.location == Location.sample(second: 1))
    }
}

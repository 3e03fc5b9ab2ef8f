import Foundation
import GPSDLocation
@testable import RobotPose
import Testing

/// RobotPose's messages as values, without gpsd: what gpsd or a recording names (the receiver's device) goes
/// into them escaped, so a message reads back with the name as it was and shows on a terminal as text.
@Suite("RobotPose messages")
struct RobotPoseMessageTests {
    /// A name that would end the string, add a key of its own and clear a terminal, were it written as it is.
    static let hostile = "/dev/tty\"S0\",\"status\":0,\"x\":\"\u{1B}[2J\u{1B}]0;owned\u{07}\n\u{202E}"

    private func fix(arrivedAgo age: Duration) -> Location {
        var fix = Location(
            coordinate: .init(latitude: 52.5, longitude: 13.4), horizontalAccuracy: 5,
            timestamp: Date(timeIntervalSince1970: 1_748_779_200), device: Self.hostile)
        fix.arrival = .init(instant: .now - age, date: .now)
        return fix
    }

    /// A manager's snapshot holding `fix` (and `heading`) in `status`, read now, `connections` sessions connected.
    private func snapshot(
        _ fix: Location?, status: LocationStatus = .fix(.threeDimensional, .gps), heading: Heading? = nil,
        headingStale: Bool = false, connections: Int = 1
    ) -> LocationSnapshot {
        let now = ContinuousClock.now
        let unavailable = if case .fix = status { false } else { true }
        return LocationSnapshot(
            instant: now, location: fix, locationAge: fix?.age(at: now), heading: heading, status: status,
            isStale: fix != nil && unavailable, isHeadingStale: heading != nil && (unavailable || headingStale),
            connections: connections)
    }

    private func object(_ line: String) throws -> [String: Any] {
        #expect(line.unicodeScalars.allSatisfy { $0.isPrintable }, "nothing a terminal would obey: \(line.debugDescription)")
        return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
    }

    @Test func aHostileDeviceNameInAFreshFixReadsBackAsItWas() throws {
        var publisher = Publisher(staleAfter: .seconds(60))
        let message = try object(publisher.message(for: snapshot(fix(arrivedAgo: .zero))))
        #expect(message["device"] as? String == Self.hostile)
        #expect(message["state"] as? String == "new")
        #expect(message["status"] as? Int == 0 && message["x"] == nil, "the name added no key")
    }

    @Test func aHostileDeviceNameInAStaleFixReadsBackAsItWas() throws {
        var publisher = Publisher(staleAfter: .seconds(1))
        let message = try object(publisher.message(for: snapshot(fix(arrivedAgo: .seconds(10)))))
        #expect(message["device"] as? String == Self.hostile)
        #expect(message["state"] as? String == "stale")
        #expect(message["status"] as? Int == -1 && message["x"] == nil, "ROS's STATUS_NO_FIX, and no key of the name's")
    }

    @Test("ages around --stale-after: a message is stale exactly when the age it shows is over the limit")
    func theStateAgreesWithTheAgeShown() throws {
        var publisher = Publisher(staleAfter: .milliseconds(1500))
        // 1.4990 s to 1.5010 s, a tenth of a millisecond apart (each a little older when the message is made).
        for tenths in 14_990...15_010 {
            let message = try object(publisher.message(for: snapshot(fix(arrivedAgo: .microseconds(tenths * 100)))))
            let age = try #require(message["age"] as? Double)
            #expect((message["state"] as? String == "stale") == (age > 1.5), "\(message)")
        }
    }

    @Test func aYoungFixTheTimelineCallsStaleIsNotPublished() throws {
        var publisher = Publisher(staleAfter: .seconds(60))
        let young = fix(arrivedAgo: .zero)
        let lost = try object(publisher.message(for: snapshot(young, status: .fixLost)))
        #expect(lost["state"] as? String == "stale" && lost["condition"] as? String == "fixLost")
        #expect(lost["status"] as? Int == -1 && lost["latitude"] == nil, "no position while no fixes come")
        // The same fix once fixes come again: its first publication as a position.
        let back = try object(publisher.message(for: snapshot(young)))
        #expect(back["state"] as? String == "new" && back["condition"] as? String == "fix")
        #expect(try object(publisher.message(for: snapshot(young)))["state"] as? String == "repeat")
    }

    @Test func aHeadingNearTheFixAddsTheOrientationOfItsYaw() throws {
        var publisher = Publisher(staleAfter: .seconds(2))
        let fresh = fix(arrivedAgo: .zero)
        func heading(_ degrees: Double, secondsAfterTheFix: Double) -> Heading {
            Heading(trueHeading: degrees, timestamp: fresh.timestamp.addingTimeInterval(secondsAfterTheFix))
        }
        func orientation(_ message: [String: Any]) -> [Double]? { message["orientation"] as? [Double] }
        let north = try object(publisher.message(for: snapshot(fresh, heading: heading(0, secondsAfterTheFix: 0.5))))
        #expect(north["heading"] as? Double == 0)
        let q = try #require(orientation(north))
        // Facing north is a yaw of +90° in ROS's ENU frame: (0, 0, sin 45°, cos 45°).
        #expect(q.count == 4 && q[0] == 0 && q[1] == 0 && abs(q[2] - 0.5.squareRoot()) < 1e-9 && abs(q[3] - 0.5.squareRoot()) < 1e-9)
        let east = try object(publisher.message(for: snapshot(fresh, heading: heading(90, secondsAfterTheFix: -1))))
        #expect(orientation(east).map { abs($0[2]) < 1e-9 && abs($0[3] - 1) < 1e-9 } == true, "facing east is yaw 0")
        let old = try object(publisher.message(for: snapshot(fresh, heading: heading(90, secondsAfterTheFix: -3))))
        #expect(old["heading"] == nil && old["orientation"] == nil, "a heading long before the fix says nothing of now")
        let none = try object(publisher.message(for: snapshot(fresh)))
        #expect(none["orientation"] == nil, "no heading, no orientation: a course is none")
        let silent = try object(publisher.message(for: snapshot(fresh, heading: heading(0, secondsAfterTheFix: 0), headingStale: true)))
        #expect(silent["orientation"] == nil && silent["state"] as? String == "repeat",
                "a heading the manager calls stale gives no orientation; the fix is still published")
        let stale = try object(publisher.message(for: snapshot(fresh, status: .fixLost, heading: heading(0, secondsAfterTheFix: 0))))
        #expect(stale["orientation"] == nil && stale["state"] as? String == "stale")
    }

    @Test func aRestartIsMarkedOnceAndAFixOfUnknownAgeIsStale() throws {
        var publisher = Publisher(staleAfter: .seconds(60))
        var unknown = fix(arrivedAgo: .zero)
        unknown.arrival?.delay = nil
        let none = try object(publisher.message(for: snapshot(nil, status: .connecting(attempt: 1), connections: 0)))
        #expect(none["state"] as? String == "none" && none["condition"] as? String == "connecting")
        let firstSession = try object(publisher.message(for: snapshot(unknown)))
        #expect(firstSession["restarted"] == nil, "the first session is no restart")
        #expect(firstSession["state"] as? String == "stale" && firstSession["age"] is NSNull,
                "an age not established is not fresh")
        let restarted = try object(publisher.message(for: snapshot(fix(arrivedAgo: .zero), connections: 2)))
        #expect(restarted["restarted"] as? Bool == true && restarted["state"] as? String == "new")
        let next = try object(publisher.message(for: snapshot(fix(arrivedAgo: .zero), connections: 2)))
        #expect(next["restarted"] == nil, "a restart is marked once")
    }
}

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

    private func object(_ line: String) throws -> [String: Any] {
        #expect(line.unicodeScalars.allSatisfy { $0.isPrintable }, "nothing a terminal would obey: \(line.debugDescription)")
        return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
    }

    @Test func aHostileDeviceNameInAFreshFixReadsBackAsItWas() throws {
        var publisher = Publisher(staleAfter: .seconds(60))
        let message = try object(publisher.message(for: fix(arrivedAgo: .zero)))
        #expect(message["device"] as? String == Self.hostile)
        #expect(message["state"] as? String == "new")
        #expect(message["status"] as? Int == 0 && message["x"] == nil, "the name added no key")
    }

    @Test func aHostileDeviceNameInAStaleFixReadsBackAsItWas() throws {
        var publisher = Publisher(staleAfter: .seconds(1))
        let message = try object(publisher.message(for: fix(arrivedAgo: .seconds(10))))
        #expect(message["device"] as? String == Self.hostile)
        #expect(message["state"] as? String == "stale")
        #expect(message["status"] as? Int == -1 && message["x"] == nil, "ROS's STATUS_NO_FIX, and no key of the name's")
    }
}

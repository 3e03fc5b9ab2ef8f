import GPSDLocation
import Testing

/// The one line each status reads as, which `whereami` prints on standard error.
@Suite struct LocationStatusTests {
    static let refused = LocationError(.gpsdUnavailable, "cannot connect to gpsd at localhost:2947: connect: Connection refused")

    @Test(arguments: [
        (LocationStatus.connecting(attempt: 1), "connecting"),
        (.connecting(attempt: 3), "connecting (attempt 3)"),
        (.connected(gpsdVersion: nil), "connected"),
        (.connected(gpsdVersion: "3.22"), "connected to gpsd 3.22"),
        (.noDevice, "gpsd has no receiver"),
        (.waitingForFix(satellites: nil), "waiting for a fix"),
        (.waitingForFix(satellites: SatelliteCount(visible: 11, used: 3)), "waiting for a fix (3 of 11 satellites used)"),
        (.fix(.threeDimensional, .rtkFixed), "fix 3D rtkFixed"),
        (.fixLost, "fix lost"),
        (.deviceGone(device: "/dev/ttyACM0"), "receiver gone (/dev/ttyACM0)"),
        (.deviceGone(device: nil), "receiver gone"),
        (.stale(silentFor: .milliseconds(5250)), "no report for 5.25 s"),
        (.reconnecting(attempt: 2, after: .milliseconds(250), because: refused),
         "reconnecting in 0.25 s (attempt 2): cannot connect to gpsd at localhost:2947: connect: Connection refused"),
        (.reconnecting(attempt: 7, after: .seconds(8), because: refused),
         "reconnecting in 8 s (attempt 7): cannot connect to gpsd at localhost:2947: connect: Connection refused"),
        (.stopped, "stopped"),
    ])
    func oneLine(status: LocationStatus, line: String) {
        #expect(status.description == line)
    }

    @Test func reconnectingStatusesDifferByTheirReason() {
        let lost = LocationError(.connectionLost, "connection to gpsd lost: gpsd closed the connection")
        #expect(LocationStatus.reconnecting(attempt: 2, after: .seconds(1), because: Self.refused)
                != .reconnecting(attempt: 2, after: .seconds(1), because: lost))
    }
}

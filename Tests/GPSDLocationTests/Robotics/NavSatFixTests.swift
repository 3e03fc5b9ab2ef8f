import Foundation
import GPSDLocation
import GPSDTestSupport
import Testing

/// NavSatFix messages made from fixes that a real gpsd (3.22, through gpsfake) made of two logs: one whose
/// receiver sends $GPGST (1-sigma errors), one whose does not. Expected values are computed by hand from the
/// numbers in the NMEA and in gpsd's TPVs, written out below.
@Suite("NavSatFix")
struct NavSatFixTests {
    /// Every epoch of a recording, once, complete.
    private func epochs(of url: URL) async throws -> [Location] {
        let gps = AsyncLocationManager(recording: url, pace: .asFastAsPossible)
        var fixes: [Location] = []
        for try await fix in gps.updates(delivery: .oncePerEpoch, bufferingPolicy: .unbounded) { fixes.append(fix) }
        return fixes
    }

    private func expectClose(_ actual: [Double], _ expected: [Double], tolerance: Double = 1e-9,
                             sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(actual.count == expected.count, sourceLocation: sourceLocation)
        for (a, e) in zip(actual, expected) {
            #expect(abs(a - e) <= tolerance * max(1, abs(e)), "\(actual) vs \(expected)", sourceLocation: sourceLocation)
        }
    }

    @Test("with GST: the receiver's 1-sigma errors squared, diagonal known")
    func covarianceFromGST() async throws {
        let fixes = try await epochs(of: Fixtures.url("gst.gpsd.json"))
        let expected = try ExpectedFix.load("gst.expected.json")
        #expect(fixes.count == expected.count)   // 20 epochs, each once
        // 12:00:03, the first fix: $GPGST,120003.00,1.20,2.00,1.10,30.0,0.80,0.60,1.90
        // east = 0.60² = 0.36, north = 0.80² = 0.64, up = 1.90² = 3.61.
        let first = NavSatFix(try #require(fixes.first))
        #expect(first.positionCovarianceType == .diagonalKnown)
        expectClose(first.positionCovariance, [0.36, 0, 0, 0, 0.64, 0, 0, 0, 3.61])
        #expect(first.status == .fix)
        #expect(first.latitude == 48.85837 && first.longitude == 2.294481)
        #expect(first.altitude == 79.6)   // altHAE: 35.0 above the geoid + 44.6 of geoid separation
        #expect(first.timestamp == GPSDTime.date(from: "2025-06-01T12:00:03.000Z"))

        // Every epoch with a GST, against the errors the fixture generator wrote into it.
        for (fix, epoch) in zip(fixes, expected) {
            #expect(fix.timestamp == epoch.date)
            let message = NavSatFix(fix)
            guard let deviation = epoch.deviation else { continue }
            #expect(message.positionCovarianceType == .diagonalKnown, "\(epoch.time)")
            expectClose(message.positionCovariance, [
                deviation.longitude * deviation.longitude, 0, 0,
                0, deviation.latitude * deviation.latitude, 0,
                0, 0, deviation.altitude * deviation.altitude,
            ])
        }
        #expect(expected.filter { $0.deviation != nil }.count == 16)
    }

    @Test("an epoch without GST falls back to gpsd's 95 % estimates: approximated")
    func epochWithoutGSTIsApproximated() async throws {
        let fixes = try await epochs(of: Fixtures.url("gst.gpsd.json"))
        // 12:00:07 has no $GPGST. gpsd's TPV: "epv":34.500, "eph":19.000, no epx/epy.
        let fix = try #require(fixes.first { $0.timestamp == GPSDTime.date(from: "2025-06-01T12:00:07.000Z") })
        #expect(fix.deviation == nil)
        let message = NavSatFix(fix)
        #expect(message.positionCovarianceType == .approximated)
        // east = north = (19.0 / 2.4477468)² = 60.252380; up = (34.5 / 1.9599640)² = 309.843228.
        expectClose(message.positionCovariance, [60.252_380_225_507_82, 0, 0, 0, 60.252_380_225_507_82, 0, 0, 0,
                                                 309.843_227_679_043_54], tolerance: 1e-12)
    }

    @Test("without GST (drive.gpsd.json): epx, epy and epv as 95 % bounds, approximated")
    func covarianceWithoutGST() async throws {
        let url = Fixtures.directory.deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/WhereAmICore/Resources/drive.gpsd.json")
        let fixes = try await epochs(of: url)
        #expect(fixes.count == 174)
        #expect(fixes.allSatisfy { $0.deviation == nil })
        // 12:00:16: "epx":9.912, "epy":10.495, "epv":29.900.
        // east = (9.912 / 1.9599640)² = 25.575634, north = (10.495 / 1.9599640)² = 28.672707,
        // up = (29.9 / 1.9599640)² = 232.726691.
        let fix = try #require(fixes.first { $0.timestamp == GPSDTime.date(from: "2025-06-01T12:00:16.000Z") })
        #expect(fix.longitudeAccuracy == 9.912 && fix.latitudeAccuracy == 10.495 && fix.verticalAccuracy == 29.9)
        let message = NavSatFix(fix)
        #expect(message.positionCovarianceType == .approximated)
        expectClose(message.positionCovariance, [25.575_633_785_460_53, 0, 0, 0, 28.672_707_463_800_833, 0, 0, 0,
                                                 232.726_691_012_259_35], tolerance: 1e-12)
        #expect(message.eastVariance == message.positionCovariance[0])
        #expect(message.upVariance == message.positionCovariance[8])
    }

    @Test("no estimate at all: unknown, all zeros; a 2D fix has no up variance, and the matrix says so")
    func unknownAndTwoDimensional() {
        let bare = NavSatFix(Location(coordinate: .init(latitude: 1, longitude: 2)))
        #expect(bare.positionCovarianceType == .unknown)
        #expect(bare.positionCovariance == Array(repeating: 0, count: 9))
        #expect(bare.eastVariance == nil && bare.upVariance == nil)

        let flat = NavSatFix(Location(coordinate: .init(latitude: 1, longitude: 2), horizontalAccuracy: 2.4477468306808166,
                                      fix: .twoDimensional))
        #expect(flat.positionCovarianceType == .approximated)
        #expect(abs(flat.positionCovariance[0] - 1) < 1e-12 && abs(flat.positionCovariance[4] - 1) < 1e-12)
        #expect(flat.positionCovariance[8] == NavSatFix.unknownVariance, "not 0, an exact altitude")
        #expect(flat.upVariance == nil && !flat.hasVerticalVariance && flat.altitude == nil)

        // GST gave latitude and longitude but not altitude: the vertical comes from epv, so approximated.
        let mixed = NavSatFix(Location(coordinate: .init(latitude: 1, longitude: 2), verticalAccuracy: 1.959963984540054,
                                       deviation: .init(latitude: 0.5, longitude: 0.25)))
        #expect(mixed.positionCovarianceType == .approximated)
        expectClose(mixed.positionCovariance, [0.0625, 0, 0, 0, 0.25, 0, 0, 0, 1])
    }

    @Test("a 3D fix with an altitude and no vertical error: the up variance is unknown, never 0")
    func altitudeWithoutVerticalError() {
        // gpsd 3.22 for a GGA+RMC receiver without GSA: mode 3, altHAE and eph, no epv.
        let fix = Location(coordinate: .init(latitude: 1, longitude: 2), altitude: 40, ellipsoidalAltitude: 80.5,
                           horizontalAccuracy: 2.4477468306808166, fix: .threeDimensional)
        let message = NavSatFix(fix)
        #expect(message.altitude == 80.5)
        #expect(message.positionCovarianceType == .approximated)
        expectClose(message.positionCovariance, [1, 0, 0, 0, 1, 0, 0, 0, NavSatFix.unknownVariance])
        #expect(message.upVariance == nil && !message.hasVerticalVariance)

        // GST with horizontal errors only, and no epv: the horizontal is the receiver's, the vertical unknown, so
        // the matrix is not "diagonal known".
        var measured = fix
        measured.deviation = .init(latitude: 0.5, longitude: 0.25)
        let withGST = NavSatFix(measured)
        #expect(withGST.positionCovarianceType == .approximated)
        expectClose(withGST.positionCovariance, [0.0625, 0, 0, 0, 0.25, 0, 0, 0, NavSatFix.unknownVariance])
        #expect(withGST.upVariance == nil)
    }

    @Test("status follows ROS's NavSatStatus: DGPS is SBAS, RTK is GBAS", arguments: [
        (Location.Status.gps, NavSatFix.Status.fix), (.dgps, .sbasFix), (.rtkFixed, .gbasFix), (.rtkFloat, .gbasFix),
        (.gnssDeadReckoning, .fix),
    ])
    func status(from status: Location.Status, is expected: NavSatFix.Status) {
        #expect(NavSatFix(Location(coordinate: .init(latitude: 0, longitude: 0), status: status)).status == expected)
        #expect(expected.rawValue == ["fix": 0, "sbasFix": 1, "gbasFix": 2]["\(expected)"].map(Int8.init))
    }

    @Test("a no-fix message says so and carries no position covariance")
    func noFixMessage() {
        let message = NavSatFix.noFix(at: Date(timeIntervalSince1970: 0))
        #expect(message.status == .noFix && message.status.rawValue == -1)
        #expect(message.positionCovarianceType == .unknown)
        #expect(message.altitude == nil)
    }
}

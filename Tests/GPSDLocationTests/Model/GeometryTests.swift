import Foundation
import GPSDLocation
import Testing

// Reference values, computed independently of the code under test:
// - GeographicLib 2.1 (Karney's algorithm, WGS84; Python `geographiclib`), `Geodesic.WGS84.Inverse(...)` for
//   `azi1`/`azi2`/`s12` and `Geodesic.WGS84.Direct(...)` for `lat2`/`lon2`. Karney's method is accurate to about
//   15 nm, so the differences the tolerances allow are Vincenty's (and rounding's), not the reference's.
// - Vincenty, T. (1975), "Direct and inverse solutions of geodesics on the ellipsoid with application of nested
//   equations", Survey Review 23(176): the Flinders Peak → Buninyong line as Geoscience Australia publishes it.
// - pymap3d 3.2.0 (Python), `geodetic2enu(lat, lon, h, lat0, lon0, h0)`, WGS84: its own ECEF and rotation code.
// - Closed forms on the ellipsoid, derived in the comments where used.
@Suite("Geometry")
struct GeometryTests {
    private func coordinate(_ latitude: Double, _ longitude: Double) -> Location.Coordinate {
        Location.Coordinate(latitude: latitude, longitude: longitude)
    }

    private func location(_ latitude: Double, _ longitude: Double, _ height: Double? = nil) -> Location {
        Location(coordinate: coordinate(latitude, longitude), ellipsoidalAltitude: height)
    }

    /// The smallest difference between two angles in degrees (so 359.9 and 0.1 are 0.2 apart).
    private func angleDifference(_ a: Double, _ b: Double) -> Double {
        abs(remainder(a - b, 360))
    }

    /// Whether two coordinates agree to `tolerance` degrees of latitude and of longitude (the longitude
    /// difference taken across the antimeridian, and scaled by cos(latitude) so it is a distance near the poles).
    private func agree(_ a: Location.Coordinate, _ b: Location.Coordinate, within tolerance: Double) -> Bool {
        abs(a.latitude - b.latitude) < tolerance
            && angleDifference(a.longitude, b.longitude) * cos(b.latitude * .pi / 180) < tolerance
    }

    /// Degrees from degrees, minutes and seconds.
    private func dms(_ d: Double, _ m: Double, _ s: Double) -> Double { d + m / 60 + s / 3600 }

    // Vincenty (1975) / Geoscience Australia: Flinders Peak −37°57′03.72030″ 144°25′29.52440″,
    // Buninyong −37°39′10.15610″ 143°55′35.38390″: 54972.271 m, α1 = 306°52′05.37″, reverse α2 = 127°10′25.07″.
    private var flindersPeak: Location.Coordinate { coordinate(-dms(37, 57, 3.72030), dms(144, 25, 29.52440)) }
    private var buninyong: Location.Coordinate { coordinate(-dms(37, 39, 10.15610), dms(143, 55, 35.38390)) }

    // MARK: Bearing

    @Test func cardinalDirections() {
        // Along a meridian the geodesic is the meridian, along the equator the equator: exact by symmetry.
        let here = coordinate(10, 20)
        #expect(here.bearing(to: coordinate(11, 20)) == 0)
        #expect(here.bearing(to: coordinate(9, 20)) == 180)
        #expect(coordinate(0, 0).bearing(to: coordinate(0, 1)) == 90)
        #expect(coordinate(0, 0).bearing(to: coordinate(0, -1)) == 270)
        #expect(location(52.5163, 13.3777).bearing(to: location(52.52, 13.3777)) == 0)
    }

    @Test func dueEastOffTheEquatorIsNotQuiteNinetyDegrees() {
        // GeographicLib: Inverse(45, 0, 45, 1): azi1 = 89.646442106813, azi2 = 90.353557893187 (the geodesic
        // bulges poleward of the parallel).
        #expect(abs(coordinate(45, 0).bearing(to: coordinate(45, 1)) - 89.646_442_106_813) < 1e-9)
        #expect(abs(coordinate(45, 0).finalBearing(to: coordinate(45, 1)) - 90.353_557_893_187) < 1e-9)
    }

    @Test func flindersPeakToBuninyongMatchesVincentysPublishedAzimuths() {
        // Published to 0.01″ (2.8e-6°), so half of that is the rounding; on GRS80, whose flattening differs from
        // WGS84's by 1e-11 (GeographicLib gives the two azimuths 6e-13° apart here).
        let forward = flindersPeak.bearing(to: buninyong)
        #expect(abs(forward - dms(306, 52, 5.37)) < 0.005 / 3600)
        // The reverse azimuth 127°10′25.07″ is the direction back, so the direction of travel is 180° more.
        #expect(abs(flindersPeak.finalBearing(to: buninyong) - dms(307, 10, 25.07)) < 0.005 / 3600)
        #expect(abs(flindersPeak.distance(from: buninyong) - 54_972.271) < 0.0005)
    }

    @Test func flindersPeakToBuninyongMatchesGeographicLib() {
        // GeographicLib: s12 = 54972.271139 m, azi1 = -53.131840797119 (306.868159202881), azi2 = -52.826369370978.
        #expect(abs(flindersPeak.bearing(to: buninyong) - 306.868_159_202_881) < 1e-9)
        #expect(abs(flindersPeak.finalBearing(to: buninyong) - 307.173_630_629_022) < 1e-9)
        #expect(abs(flindersPeak.distance(from: buninyong) - 54_972.271_139) < 1e-5)
    }

    @Test(arguments: [
        // (from, to, GeographicLib's azi1 and azi2 in 0 ..< 360)
        (52.5163, 13.3777, 48.8584, 2.2945, 246.918_934_200_972, 238.328_725_282_429),  // Berlin → Paris
        (40.6413, -73.7781, 51.4700, -0.4543, 51.381_647_858_369, 107.982_829_055_579),  // JFK → Heathrow
        (-33.9461, 151.1772, -33.3930, -70.7858, 145.252_273_510_896, 34.494_531_452_667),  // Sydney → Santiago
        (-60.0, -30.0, 70.0, 120.0, 38.652_026_323_049, 114.121_720_802_392),  // 18237 km
        (10.0, 179.0, 11.0, -179.0, 63.016_413_404_336, 63.380_934_411_324),  // across the antimeridian
    ])
    func longLinesMatchGeographicLib(
        lat1: Double, lon1: Double, lat2: Double, lon2: Double, azi1: Double, azi2: Double
    ) {
        // 1e-8° is 1.7 mm sideways at 10000 km; Vincenty's iteration stops at 1e-12 rad (6e-11°) of longitude.
        let a = coordinate(lat1, lon1), b = coordinate(lat2, lon2)
        #expect(angleDifference(a.bearing(to: b), azi1) < 1e-8)
        #expect(angleDifference(a.finalBearing(to: b), azi2) < 1e-8)
        #expect(a.bearing(to: b) >= 0 && a.bearing(to: b) < 360)
    }

    @Test func acrossTheAntimeridianTheShortWayRound() {
        // (0, 179.5) → (0, -179.5) is one degree east along the equator: GeographicLib azi1 = 90, not 270.
        #expect(coordinate(0, 179.5).bearing(to: coordinate(0, -179.5)) == 90)
        #expect(coordinate(0, -179.5).bearing(to: coordinate(0, 179.5)) == 270)
    }

    @Test func towardsAndFromThePoles() {
        // Towards a pole along the meridian: GeographicLib Inverse(30, 40, ±90, 0) gives azi1 0 and 180.
        #expect(coordinate(30, 40).bearing(to: coordinate(90, 0)) == 0)
        #expect(coordinate(30, 40).bearing(to: coordinate(-90, 0)) == 180)
        // From a pole, the bearing is reckoned as if the pole lay on its own meridian, as GeographicLib does:
        // Inverse(90, 0, 0, 10) azi1 = 170 (down the meridian 10 = 180 - 170), Inverse(-90, 0, 0, 10) azi1 = 10.
        #expect(abs(coordinate(90, 0).bearing(to: coordinate(0, 10)) - 170) < 1e-9)
        #expect(abs(coordinate(-90, 0).bearing(to: coordinate(0, 10)) - 10) < 1e-9)
    }

    @Test func coincidentPointsHaveBearingZero() {
        for point in [coordinate(0, 0), coordinate(-37.95, 144.42), coordinate(90, 0), coordinate(-90, 45)] {
            #expect(point.bearing(to: point) == 0)
            #expect(point.finalBearing(to: point) == 0)
        }
        // 180 and -180 are one meridian.
        #expect(coordinate(12, 180).bearing(to: coordinate(12, -180)) == 0)
        #expect(coordinate(12, 180).distance(from: coordinate(12, -180)) == 0)
    }

    @Test func nearlyAntipodalPointsFallBackToTheSphericalBearing() {
        // Vincenty's inverse does not converge for (0, 0) → (0.5, 179.7) (LocationTests checks the distance's
        // fallback there); the documented fallback is the great circle's initial bearing on a sphere,
        // atan2(sin Δλ cos φ2, cos φ1 sin φ2 − sin φ1 cos φ2 cos Δλ): by hand (Python's math module)
        // atan2(sin 179.7° cos 0.5°, sin 0.5°) = 30.962999361°. The final bearing is the way back's initial
        // bearing turned round: atan2(sin(-179.7°), -sin 0.5° cos(-179.7°)) + 180° = 149.035691631°.
        // (GeographicLib's ellipsoidal azi1 is 15.56°: near the antipode the shortest path is nearly undetermined,
        // which is why the distance, not the direction, is what the fallback is good for.)
        let from = coordinate(0, 0), to = coordinate(0.5, 179.7)
        #expect(abs(from.bearing(to: to) - 30.962_999_361) < 1e-9)
        #expect(abs(from.finalBearing(to: to) - 149.035_691_631) < 1e-9)
    }

    @Test func invalidInputGivesNaNBearing() {
        let fine = coordinate(10, 20)
        for bad in [coordinate(.nan, 20), coordinate(10, .nan), coordinate(.infinity, 0), coordinate(0, -.infinity),
            coordinate(90.5, 0), coordinate(-91, 0)]
        {
            #expect(fine.bearing(to: bad).isNaN)
            #expect(bad.bearing(to: fine).isNaN)
            #expect(fine.finalBearing(to: bad).isNaN)
        }
    }

    // MARK: Destination

    @Test(arguments: [
        // (start, bearing, distance, GeographicLib Direct's lat2 and lon2 in -180 ..< 180)
        (52.5163, 13.3777, 45.0, 10_000.0, 52.579_798_400_389, 13.482_012_724_087),
        (0.0, 0.0, 30.0, 10_000_000.0, 60.083_246_216_080, 89.889_300_252_894),
        (-33.9461, 151.1772, 100.0, 12_000_000.0, 2.067_838_535_492, -98.625_438_922_935),
        (-45.0, -170.0, 250.0, 19_000_000.0, 41.390_437_867_001, 21.539_575_860_408),
        (10.0, 179.9, 80.0, 50_000.0, 10.078_193_265_582, -179.650_779_878_844),  // across the antimeridian
        (89.9, 0.0, 0.0, 50_000.0, 89.652_348_254_316, -180.0),  // over the north pole
        (90.0, 0.0, 90.0, 1_000_000.0, 81.046_232_815_951, 90.0),  // from the pole, down the meridian 180 - 90
        (60.0, 25.0, 330.0, -1_000.0, 59.992_226_532_746, 25.008_958_471_681),  // negative: backwards
        (0.0, 0.0, 90.0, 111_319.490_793, 0.0, 0.999_999_999_998),  // one degree of the equator (a·π/180)
    ])
    func destinationMatchesGeographicLib(
        lat1: Double, lon1: Double, bearing: Double, distance: Double, lat2: Double, lon2: Double
    ) {
        // 1e-9° is 0.11 mm of latitude: Vincenty's direct series is good to about 0.1 mm at 20000 km.
        let end = coordinate(lat1, lon1).destination(bearing: bearing, distance: distance)
        #expect(agree(end, coordinate(lat2, lon2), within: 1e-9), "\(end)")
        #expect(end.longitude >= -180 && end.longitude < 180)
        #expect(location(lat1, lon1, 1234).destination(bearing: bearing, distance: distance) == end)
    }

    @Test func flindersPeakToBuninyongByTheDirectFormula() {
        // Vincenty's published azimuth and distance lead to the published Buninyong to within their rounding
        // (0.005″ of azimuth is 1.3 mm sideways at 55 km): 3e-8° is 3.3 mm of latitude. GeographicLib Direct with
        // the same rounded inputs: (-37.652821145636, 143.926495523322), to which the formula must agree tightly.
        let end = flindersPeak.destination(bearing: dms(306, 52, 5.37), distance: 54_972.271)
        #expect(agree(end, buninyong, within: 3e-8))
        #expect(agree(end, coordinate(-37.652_821_145_636, 143.926_495_523_322), within: 1e-11))
    }

    @Test(arguments: [
        (52.5163, 13.3777, 48.8584, 2.2945),
        (40.6413, -73.7781, 51.4700, -0.4543),
        (-33.9461, 151.1772, -33.3930, -70.7858),
        (-60.0, -30.0, 70.0, 120.0),
        (10.0, 179.0, 11.0, -179.0),
        (89.0, 10.0, 88.0, -170.0),  // over the pole
        (0.0, 0.0, 0.0, 1.0),
        (-0.5, 30.0, 0.5, 30.0001),  // across the equator, nearly along a meridian
    ])
    func destinationUndoesBearingAndDistance(lat1: Double, lon1: Double, lat2: Double, lon2: Double) {
        // Inverse then direct: the two solutions are independent series, so agreement to 1e-9° (0.1 mm) checks both.
        let a = coordinate(lat1, lon1), b = coordinate(lat2, lon2)
        let end = a.destination(bearing: a.bearing(to: b), distance: a.distance(from: b))
        #expect(agree(end, b, within: 1e-9), "\(end)")
    }

    @Test func destinationEdgeCases() {
        let start = coordinate(47.5, 8.5)
        // Distance 0 is the start itself, exactly; a longitude of 180 comes back as -180.
        #expect(start.destination(bearing: 123, distance: 0) == start)
        #expect(coordinate(5, 180).destination(bearing: 0, distance: 0) == coordinate(5, -180))
        // A bearing is an angle: 370 is 10, -90 is 270 (same trigonometry, so to rounding).
        #expect(agree(start.destination(bearing: 370, distance: 5_000), start.destination(bearing: 10, distance: 5_000),
            within: 1e-12))
        #expect(agree(start.destination(bearing: -90, distance: 5_000), start.destination(bearing: 270, distance: 5_000),
            within: 1e-12))
        // A degree of the equator (a·π/180 = 111319.4907933 m) east of 179.5 is -179.5, across the antimeridian.
        let across = coordinate(0, 179.5).destination(bearing: 90, distance: 111_319.490_793_3)
        #expect(abs(across.longitude - -179.5) < 1e-11)
        #expect(abs(across.latitude) < 1e-12)
        // From the north pole, bearing 180 is down the meridian 0: a quarter meridian (GeographicLib:
        // 10001965.729313 m) reaches the equator at longitude 0.
        #expect(agree(coordinate(90, 0).destination(bearing: 180, distance: 10_001_965.729_313), coordinate(0, 0),
            within: 1e-9))
    }

    @Test func invalidInputGivesNaNDestination() {
        let fine = coordinate(10, 20)
        let results = [
            fine.destination(bearing: .nan, distance: 10), fine.destination(bearing: 10, distance: .nan),
            fine.destination(bearing: .infinity, distance: 10), fine.destination(bearing: 10, distance: .infinity),
            coordinate(.nan, 20).destination(bearing: 10, distance: 10),
            coordinate(10, .nan).destination(bearing: 10, distance: 10),
            coordinate(95, 20).destination(bearing: 10, distance: 10),
        ]
        for result in results {
            #expect(result.latitude.isNaN && result.longitude.isNaN)
        }
    }

    // MARK: Local tangent plane

    private func agree(_ offset: LocalOffset, _ east: Double, _ north: Double, _ up: Double, within tolerance: Double)
        -> Bool
    {
        abs(offset.east - east) < tolerance && abs(offset.north - north) < tolerance && abs(offset.up - up) < tolerance
    }

    @Test func oneKilometreNorth() {
        // GeographicLib Direct(45, 7, 0, 1000 m) → latitude 45.008998319221597; pymap3d geodetic2enu of it from
        // (45, 7, 0): e = 5e-11, n = 999.9999958893, u = -0.0785251685 (the chord dips below the tangent plane).
        let reference = location(45, 7, 0)
        let offset = location(45.008_998_319_221_597, 7, 0).offset(from: reference)
        #expect(agree(offset, 0, 999.999_995_889_3, -0.078_525_168_5, within: 1e-6), "\(offset)")
        #expect(offset.ned == LocalOffset.NED(north: offset.north, east: offset.east, down: -offset.up))
        // At a height of 300 m the same geodesic lies on a sphere 300 m bigger: pymap3d n = 1000.047110979,
        // u = -0.078528868 (factor 1 + 300 / R).
        let high = location(45.008_998_319_221_597, 7, 300).offset(from: location(45, 7, 300))
        #expect(agree(high, 0, 1_000.047_110_979, -0.078_528_868, within: 1e-6), "\(high)")
    }

    @Test(arguments: [
        // (point, reference, pymap3d geodetic2enu's east, north, up)
        (52.5164, 13.3779, 81.0, 52.5163, 13.3777, 80.0, 13.577_164_328, 11.127_874_397, 0.999_975_870),
        (48.8584, 2.2945, 35.0, 52.5163, 13.3777, 80.0, -808_216.070_905_695, -344_414.697_298_911,
            -60_746.556_597_521),
        (-16.5, -179.9, 12.0, -16.6, 179.95, 5.0, 16_014.635_059_896, 11_060.469_497_494, -22.746_725_196),
        (89.99, 100.0, 0.0, 89.995, -80.0, 10.0, 0.0, 1_675.409_674_120, -10.219_310_613),  // over the pole
        (-33.86, -70.70, 650.0, -33.85, -70.72, 600.0, 1_850.909_780_366, -1_109.491_080_218, 49.634_906_112),
        (44.999_999_295_777_58, 7.012_682_817_143_41, 300.0, 45.0, 7.0, 300.0, 1_000.046_952_810, 0.0,
            -0.078_265_164),  // GeographicLib Direct(45, 7, 90°, 1000 m)
    ])
    func offsetsMatchPymap3d(
        lat: Double, lon: Double, h: Double, lat0: Double, lon0: Double, h0: Double,
        east: Double, north: Double, up: Double
    ) {
        // Both are exact formulas; what remains is rounding of ECEF values near 6.4e6 m (about 1e-9 m each).
        // 1 µm allows for that, with a margin for the 800 km line.
        let offset = location(lat, lon, h).offset(from: location(lat0, lon0, h0))
        #expect(agree(offset, east, north, up, within: 1e-6), "\(offset)")
    }

    @Test func offsetsOfClosedForm() {
        // On the equator at longitude 0 the ENU axes are ECEF's y, z, x. ECEF of (0, 0, 0) is (a, 0, 0), of
        // (0, 90, 0) is (0, a, 0) and of the north pole (0, 0, b), with a = 6378137 and
        // b = a (1 - f) = 6356752.314245179 (WGS84).
        let origin = location(0, 0, 0)
        #expect(agree(location(0, 90, 0).offset(from: origin), 6_378_137, 0, -6_378_137, within: 1e-6))
        #expect(agree(location(90, 0, 0).offset(from: origin), 0, 6_356_752.314_245_179, -6_378_137, within: 1e-6))
        // Straight up along the normal: the height difference, and nothing else. Without an ellipsoidal altitude
        // a location counts as on the ellipsoid.
        #expect(agree(location(45, 7, 400).offset(from: location(45, 7, 300)), 0, 0, 100, within: 1e-8))
        #expect(agree(location(45, 7, 25).offset(from: location(45, 7)), 0, 0, 25, within: 1e-8))
        let itself = location(-12, 34, 5).offset(from: location(-12, 34, 5))
        #expect(itself.east == 0 && itself.north == 0 && itself.up == 0)
    }

    @Test func nedIsNorthEastAndMinusUp() {
        let offset = LocalOffset(east: 2, north: 10, up: 3)
        #expect(offset.ned == LocalOffset.NED(north: 10, east: 2, down: -3))
        #expect(LocalOffset(offset.ned) == offset)
        let measured = location(52.5164, 13.3779, 81).offset(from: location(52.5163, 13.3777, 80))
        #expect(measured.ned.north == measured.north && measured.ned.east == measured.east)
        #expect(measured.ned.down == -measured.up)
    }

    @Test func locationAtOffsetMatchesPymap3d() {
        // pymap3d enu2geodetic(1000, -2000, 30, -33.85, -70.72, 600) = (-33.868028777411, -70.709193458575,
        // 630.392973485), and (100000, 100000, 0) from (10, 179.5, 0) = (10.902630923020, -179.585468267760,
        // 1572.597654264): across the antimeridian, 1.6 km above the ellipsoid 141 km away.
        let a = location(-33.85, -70.72, 600).location(atOffset: LocalOffset(east: 1_000, north: -2_000, up: 30))
        #expect(agree(a.coordinate, coordinate(-33.868_028_777_411, -70.709_193_458_575), within: 1e-11))
        #expect(abs((a.ellipsoidalAltitude ?? .nan) - 630.392_973_485) < 1e-6)
        let base = location(10, 179.5, 0)
        let b = base.location(atOffset: LocalOffset(east: 100_000, north: 100_000, up: 0))
        #expect(agree(b.coordinate, coordinate(10.902_630_923_020, -179.585_468_267_760), within: 1e-11))
        #expect(abs((b.ellipsoidalAltitude ?? .nan) - 1_572.597_654_264) < 1e-6)
        #expect(b.altitude == nil && b.timestamp == base.timestamp)
    }

    @Test func straightUpKeepsLatitudeAndLongitude() {
        // Along the ellipsoidal normal geodetic latitude and longitude do not change, whatever the height (this is
        // the definition of geodetic height): here to the height of the ISS.
        for (lat, lon) in [(50.0, -22.0), (0.0, 0.0), (-89.5, 135.0), (33.3, 179.9)] {
            let up = location(lat, lon, 100).location(atOffset: LocalOffset(east: 0, north: 0, up: 420_000))
            #expect(agree(up.coordinate, coordinate(lat, lon), within: 1e-12), "\(up)")
            #expect(abs((up.ellipsoidalAltitude ?? .nan) - 420_100) < 1e-6)
        }
    }

    @Test(arguments: [
        // (reference latitude, longitude, height; offset east, north, up)
        (45.0, 7.0, 300.0, 20.0, 50.0, 0.0),
        (52.5163, 13.3777, 80.0, -1_234.5, 987.6, -3.2),
        (-33.85, -70.72, 600.0, 1_000.0, -2_000.0, 30.0),
        (0.0, 179.99, 0.0, 5_000.0, 0.0, 0.0),  // across the antimeridian
        (89.999, 0.0, 0.0, -500.0, 300.0, -20.0),  // past the north pole
        (-90.0, 0.0, 2_800.0, 150.0, 40.0, 1.0),  // at the south pole (the plane's axes follow the meridian 0)
        (30.0, -100.0, -50.0, 200_000.0, -300_000.0, 10_000.0),  // hundreds of kilometres, 10 km up
        (51.6, -20.0, 100.0, 147_653.4, 191_669.4, 415_594.4),  // out to the ISS
    ])
    func enuRoundTripsWithinAMicrometre(
        lat0: Double, lon0: Double, h0: Double, east: Double, north: Double, up: Double
    ) {
        // offset → location → offset: the promise is < 1 mm; Bowring's iteration converges to rounding, so the
        // error is the ECEF rounding, about 1e-9 m: 1 µm checks it tightly.
        let reference = location(lat0, lon0, h0)
        let offset = LocalOffset(east: east, north: north, up: up)
        let point = reference.location(atOffset: offset)
        #expect(point.coordinate.longitude >= -180 && point.coordinate.longitude < 180)
        #expect(abs(point.coordinate.latitude) <= 90)
        #expect(agree(point.offset(from: reference), east, north, up, within: 1e-6), "\(point)")
    }

    @Test(arguments: [
        (45.0, 7.0, 300.0, 45.009, 7.01, 310.0),
        (-16.6, 179.95, 5.0, -16.5, -179.9, 12.0),
        (89.995, -80.0, 10.0, 89.99, 100.0, 0.0),
        (0.0, 0.0, 0.0, 0.0, 90.0, 0.0),  // a quarter of the way round the world
        (50.0, -22.0, 100.0, 51.6, -20.0, 420_000.0),
    ])
    func geodeticRoundTripsWithinAMicrometre(
        lat0: Double, lon0: Double, h0: Double, lat: Double, lon: Double, h: Double
    ) {
        // location → offset → location, measured in metres on the ground: a degree of latitude is at most
        // 111.7 km, so 1e-11° is 1.1 µm.
        let reference = location(lat0, lon0, h0)
        let back = reference.location(atOffset: location(lat, lon, h).offset(from: reference))
        #expect(agree(back.coordinate, coordinate(lat, lon), within: 1e-11), "\(back)")
        #expect(abs((back.ellipsoidalAltitude ?? .nan) - h) < 1e-6)
    }

    @Test func invalidInputGivesNaNOffsets() {
        let fine = location(10, 20, 30)
        let bad = [location(.nan, 20, 30), location(10, .nan, 30), location(10, 20, .nan), location(10, 20, .infinity),
            location(91, 20, 30)]
        for point in bad {
            for offset in [point.offset(from: fine), fine.offset(from: point)] {
                #expect(offset.east.isNaN && offset.north.isNaN && offset.up.isNaN)
            }
            let there = point.location(atOffset: LocalOffset(east: 1, north: 1, up: 1))
            #expect(there.coordinate.latitude.isNaN && there.coordinate.longitude.isNaN)
            #expect(there.ellipsoidalAltitude?.isNaN == true)
        }
        for offset in [LocalOffset(east: .nan, north: 0, up: 0), LocalOffset(east: 0, north: .infinity, up: 0),
            LocalOffset(east: 0, north: 0, up: -.infinity)]
        {
            let there = fine.location(atOffset: offset)
            #expect(there.coordinate.latitude.isNaN && there.coordinate.longitude.isNaN)
            #expect(there.ellipsoidalAltitude?.isNaN == true)
        }
    }
}

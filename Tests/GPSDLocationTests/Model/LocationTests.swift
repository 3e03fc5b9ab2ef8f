import Foundation
import GPSDLocation
import Testing

@Suite("Location")
struct LocationTests {
    private func point(_ latitude: Double, _ longitude: Double) -> Location {
        Location(coordinate: .init(latitude: latitude, longitude: longitude))
    }

    // MARK: Distance
    //
    // Reference values from GeographicLib 2.1 (Karney's algorithm, WGS84), `Geodesic.WGS84.Inverse(...)['s12']`,
    // computed independently of the code under test.

    @Test func oneDegreeOfLongitudeOnTheEquator() {
        // Along the equator the geodesic is the equator itself: a * π / 180.
        #expect(abs(point(0, 0).distance(from: point(0, 1)) - 111_319.490_793) < 0.01)
        #expect(abs(point(0, 179).distance(from: point(0, 178)) - 111_319.490_793) < 0.01)
    }

    @Test func oneDegreeOfLatitudeAlongAMeridian() {
        // GeographicLib: Inverse(0, 0, 1, 0) = 110574.3886 m (meridian arc, not the equatorial degree).
        #expect(abs(point(0, 0).distance(from: point(1, 0)) - 110_574.388_6) < 0.01)
    }

    @Test func berlinToParis() {
        // Brandenburg Gate to the Eiffel Tower. GeographicLib: 881329.942 m.
        let berlin = point(52.5163, 13.3777)
        let paris = point(48.8584, 2.2945)
        #expect(abs(berlin.distance(from: paris) - 881_329.942) < 0.01)
        #expect(abs(berlin.distance(from: paris) - paris.distance(from: berlin)) < 1e-6)
    }

    @Test func distanceToItselfIsZero() {
        for location in [point(0, 0), point(52.5163, 13.3777), point(-90, 0), point(89.9, -179.9)] {
            #expect(location.distance(from: location) == 0)
        }
    }

    @Test func distanceIgnoresAltitudeAndOtherFields() {
        let low = Location(coordinate: .init(latitude: 10, longitude: 20), altitude: 0, speed: 3)
        let high = Location(coordinate: .init(latitude: 10, longitude: 20), altitude: 8000, horizontalAccuracy: 1)
        #expect(low.distance(from: high) == 0)
        #expect(low.distance(from: point(10, 21)) == low.coordinate.distance(from: .init(latitude: 10, longitude: 21)))
    }

    @Test(arguments: [
        // (a, b, GeographicLib's distance)
        (0.0, 0.0, 0.5, 179.7, 19_944_127.421),
        (0.0, 0.0, 0.0, 180.0, 20_003_931.459),
        (0.0, 0.0, 0.5, 179.5, 19_936_288.579),
        (10.0, 20.0, -10.1, -159.9, 19_992_082.268),
    ])
    func nearlyAntipodalPointsGiveAboutHalfTheCircumference(
        lat1: Double, lon1: Double, lat2: Double, lon2: Double, reference: Double
    ) {
        let distance = point(lat1, lon1).distance(from: point(lat2, lon2))
        #expect(distance.isFinite)
        // Vincenty may not converge here; the fallback is a sphere, good to about 0.5 %.
        #expect(abs(distance - reference) < reference * 0.005)
        #expect(distance > 19_800_000 && distance < 20_100_000)
    }

    // MARK: Codable

    private static let full = Location(
        coordinate: .init(latitude: -33.5, longitude: -70.25),
        altitude: 490.3, ellipsoidalAltitude: 520.1,
        horizontalAccuracy: 6.1, verticalAccuracy: 9.5,
        speed: 10, speedAccuracy: 0.5,
        course: 225, courseAccuracy: 4.25,
        climb: 0.1,
        timestamp: Date(timeIntervalSince1970: 1_748_779_205.25),
        fix: .threeDimensional, status: .rtkFixed, device: "/dev/ttyUSB0")

    @Test func everyFixAndStatusRoundTrips() throws {
        for fix in Location.Fix.allCases {
            for status in Location.Status.allCases {
                let location = Location(coordinate: .init(latitude: 1, longitude: 2),
                                        timestamp: Date(timeIntervalSince1970: 1_748_779_205), fix: fix, status: status)
                let data = try JSONEncoder().encode(location)
                #expect(try JSONDecoder().decode(Location.self, from: data) == location)
            }
        }
    }

    // MARK: Hashable

    @Test func equalLocationsAreEqualAndHashAlike() {
        let copy = Self.full
        #expect(copy == Self.full)
        #expect(copy.hashValue == Self.full.hashValue)
        #expect(Set([Self.full, copy]).count == 1)
    }

    @Test func anyDifferentFieldMakesLocationsDiffer() {
        var variants: [Location] = []
        func variant(_ change: (inout Location) -> Void) {
            var location = Self.full
            change(&location)
            variants.append(location)
        }
        variant { $0.coordinate.latitude += 1e-9 }
        variant { $0.coordinate.longitude = 0 }
        variant { $0.altitude = nil }
        variant { $0.ellipsoidalAltitude = 0 }
        variant { $0.horizontalAccuracy = 6.2 }
        variant { $0.verticalAccuracy = nil }
        variant { $0.speed = 10.5 }
        variant { $0.speedAccuracy = nil }
        variant { $0.course = 226 }
        variant { $0.courseAccuracy = nil }
        variant { $0.climb = -0.1 }
        variant { $0.timestamp = $0.timestamp.addingTimeInterval(0.001) }
        variant { $0.fix = .twoDimensional }
        variant { $0.status = .dgps }
        variant { $0.device = "/dev/ttyUSB1" }
        for location in variants {
            #expect(location != Self.full)
        }
        #expect(Set(variants + [Self.full]).count == variants.count + 1)
    }
}

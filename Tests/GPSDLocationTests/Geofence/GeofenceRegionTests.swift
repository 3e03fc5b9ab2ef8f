import Foundation
import GPSDLocation
import Testing

/// `GeofenceRegion`: a region that cannot be true is never made, nor decoded.
@Suite("Geofence regions")
struct GeofenceRegionTests {
    static let center = Location.Coordinate(latitude: 52.5163, longitude: 13.3777)

    @Test(arguments: [0, -0.0, -1, -Double.leastNonzeroMagnitude, .nan, .infinity, -.infinity])
    func aRadiusThatIsNotAFiniteNumberAboveZeroIsRejected(radius: Double) {
        let error = #expect(throws: GeofenceError.self) {
            try GeofenceRegion(identifier: "bad", center: Self.center, radius: radius)
        }
        #expect(error?.code == .invalidRadius)
    }

    @Test(arguments: [
        (90.000_001, 0.0), (-91, 0), (.nan, 0), (.infinity, 0), (0, 180.5), (0, -181), (0, .nan), (0, -.infinity),
    ])
    func aCentreOffTheEarthIsRejected(latitude: Double, longitude: Double) {
        let error = #expect(throws: GeofenceError.self) {
            try GeofenceRegion(
                identifier: "bad", center: .init(latitude: latitude, longitude: longitude), radius: 100)
        }
        #expect(error?.code == .invalidCenter)
    }

    @Test func theEdgesOfTheEarthAndTinyRadiiAreAccepted() throws {
        let pole = try GeofenceRegion(identifier: "pole", center: .init(latitude: 90, longitude: -180), radius: 1e-9)
        #expect(pole.center == .init(latitude: 90, longitude: -180))
        #expect(pole.radius == 1e-9)
        let antimeridian = try GeofenceRegion(
            identifier: "south", center: .init(latitude: -90, longitude: 180), radius: 20_000_000)
        #expect(antimeridian.identifier == "south")
    }

    @Test func aRegionRoundTripsThroughJSON() throws {
        let region = try GeofenceRegion(identifier: "office", center: Self.center, radius: 150.5)
        let decoded = try JSONDecoder().decode(GeofenceRegion.self, from: JSONEncoder().encode(region))
        #expect(decoded == region)
    }

    @Test(arguments: [
        #"{"identifier":"x","center":{"latitude":52.5,"longitude":13.4},"radius":-5}"#,
        #"{"identifier":"x","center":{"latitude":52.5,"longitude":13.4},"radius":0}"#,
        #"{"identifier":"x","center":{"latitude":100,"longitude":13.4},"radius":50}"#,
        #"{"identifier":"x","center":{"latitude":52.5,"longitude":-200},"radius":50}"#,
    ])
    func decodingRefusesARegionThatCannotBeTrue(json: String) {
        let error = #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(GeofenceRegion.self, from: Data(json.utf8))
        }
        guard case .dataCorrupted(let context) = error else {
            Issue.record("expected dataCorrupted, got \(String(describing: error))")
            return
        }
        #expect(context.underlyingError is GeofenceError)
    }
}

import Foundation
@testable import GPSDCore
import GPSDLocation
import PropertyBased
import Testing

/// Properties of the model over generated values (swift-property-based: a failure names its seed and the smallest
/// input it shrank to): its JSON reads back as what was written, what it reads is possible, and its geometry
/// goes there and back again anywhere on the globe.
@Suite("Model properties")
struct PropertyTests {
    // MARK: JSON

    @Test("any fix that could be true: its jsonText and JSONEncoder's JSON decode to it (the time to the ms)")
    func jsonRoundTrip() async {
        // Any fix that could be true: every value in its range or absent, a time from 1980 to 2099 (to the
        // nanosecond and beyond), a device named with any characters (controls, quotes, the rest of Unicode).
        func maybe(_ range: ClosedRange<Double>) -> Generator<Double?, Shrink.WithNil<Shrink.Floating<Double>>> {
            Gen.double(in: range).optional
        }
        let time = Gen.double(in: Plausibility.secondsOfYears).map { Date(timeIntervalSince1970: $0) }
        // Two ranges: swift-property-based's unicodeScalar(in:) traps on a range holding the surrogates.
        let scalar = Gen.oneOf(Gen.unicodeScalar(in: "\u{0}"..."\u{D7FF}"), Gen.unicodeScalar(in: "\u{E000}"..."\u{10FFFF}"))
        let device = scalar.array(of: 0...12).map { String(String.UnicodeScalarView($0)) }
        let position = zip(
            Gen.double(in: Plausibility.latitude), Gen.double(in: Plausibility.longitude),
            maybe(Plausibility.altitude), maybe(Plausibility.altitude), maybe(Plausibility.positionError),
            maybe(Plausibility.positionError), maybe(Plausibility.positionError), maybe(Plausibility.positionError))
        let motion = zip(
            maybe(Plausibility.speed), maybe(Plausibility.speedError), Gen.double(in: 0..<360).optional,
            maybe(Plausibility.courseError), maybe(Plausibility.climb), time, Gen<Location.Fix>.case,
            Gen<Location.Status>.case, device.optional)
        let extras = zip(
            maybe(Plausibility.positionError), maybe(Plausibility.positionError), maybe(Plausibility.positionError),
            maybe(Plausibility.baselineComponent), maybe(Plausibility.baselineComponent),
            maybe(Plausibility.baselineComponent), maybe(Plausibility.baselineLength), Gen.double(in: 0..<360).optional)
        await propertyCheck(count: 2_000, input: position, motion, extras) { position, motion, extras in
            let deviation = Location.Deviation(latitude: extras.0, longitude: extras.1, altitude: extras.2)
            let baseline = Location.Baseline(
                east: extras.3, north: extras.4, up: extras.5, length: extras.6, course: extras.7)
            let location = Location(
                coordinate: .init(latitude: position.0, longitude: position.1), altitude: position.2,
                ellipsoidalAltitude: position.3, horizontalAccuracy: position.4, verticalAccuracy: position.5,
                latitudeAccuracy: position.6, longitudeAccuracy: position.7,
                deviation: deviation == Location.Deviation() ? nil : deviation,
                baseline: baseline == Location.Baseline() ? nil : baseline,
                speed: motion.0, speedAccuracy: motion.1, course: motion.2, courseAccuracy: motion.3, climb: motion.4,
                timestamp: motion.5, fix: motion.6, status: motion.7, device: motion.8)
            let line = location.jsonText
            let decoded = try JSONDecoder().decode(Location.self, from: Data(line.utf8))
            // Every value as it was; the time to the millisecond, as JSON carries it.
            var (timeless, originalTimeless) = (decoded, location)
            (timeless.timestamp, originalTimeless.timestamp) = (location.timestamp, location.timestamp)
            #expect(timeless == originalTimeless, "\(line)")
            #expect(abs(decoded.timestamp.timeIntervalSince(location.timestamp)) <= 0.000_5 + 1e-6, "\(line)")
            let encoded = try JSONDecoder().decode(Location.self, from: try JSONEncoder().encode(location))
            #expect(encoded == decoded, "JSONEncoder's JSON and jsonText agree")
            #expect(try JSONDecoder().decode(Location.self, from: Data(decoded.jsonText.utf8)) == decoded, "stable")
        }
    }

    @Test("whatever JSON decodes as a fix is a fix that could be true")
    func decodedIsPlausible() async {
        // Each field: usually a value from its own range, one time in twenty a number from anywhere (negative, huge,
        // just past a bound); the time's year from 1960 to 2120.
        let ranges: [(Location.JSONKey, ClosedRange<Double>)] = [
            (.latitude, Plausibility.latitude), (.longitude, Plausibility.longitude),
            (.altitude, Plausibility.altitude), (.ellipsoidalAltitude, Plausibility.altitude),
            (.horizontalAccuracy, Plausibility.positionError), (.verticalAccuracy, Plausibility.positionError),
            (.latitudeAccuracy, Plausibility.positionError), (.longitudeAccuracy, Plausibility.positionError),
            (.latitudeDeviation, Plausibility.positionError), (.longitudeDeviation, Plausibility.positionError),
            (.altitudeDeviation, Plausibility.positionError), (.baselineEast, Plausibility.baselineComponent),
            (.baselineNorth, Plausibility.baselineComponent), (.baselineUp, Plausibility.baselineComponent),
            (.baselineLength, Plausibility.baselineLength), (.baselineCourse, Plausibility.course),
            (.speed, Plausibility.speed), (.speedAccuracy, Plausibility.speedError), (.course, Plausibility.course),
            (.courseAccuracy, Plausibility.courseError), (.climb, Plausibility.climb),
        ]
        #expect(Set(ranges.map(\.0)).count == Location.JSONKey.allCases.count - 4, "every number of the schema")
        let anywhere = Gen.frequency(
            (2, Gen.double(in: -2e7...2e7)), (1, Gen.double(in: -1e300...1e300)),
            (1, Gen.element(of: [-90.000_000_1, 90.000_000_1, 180.000_001, -11_000.1, 12_000.1, 360.1, -0.000_001,
                                 1_000_000.1, 12_760_000.1]).compactMap { $0 }))
        let field = zip(Gen.double(in: 0...1), Gen.int(in: 0...19), anywhere).optional(valueRate: 0.6)
        let fields = field.array(of: ranges.count...ranges.count)
        var accepted = 0
        await propertyCheck(count: 2_000, input: fields, Gen.int(in: 1960...2120).optional) { fields, year in
            var members: [String] = []
            for ((key, range), field) in zip(ranges, fields) {
                guard let (fraction, digit, wild) = field else { continue }
                let value = digit == 0 ? wild : range.lowerBound + fraction * (range.upperBound - range.lowerBound)
                members.append("\"\(key.rawValue)\":\(value)")
            }
            if let year { members.append(#""timestamp":"\#(year)-06-01T12:00:05.123Z""#) }
            let json = "{" + members.joined(separator: ",") + "}"
            guard let location = try? JSONDecoder().decode(Location.self, from: Data(json.utf8)) else { return }
            accepted += 1
            #expect(Plausibility.impossibility(of: location) == nil, "\(json)")
        }
        #expect(accepted >= 100, "\(accepted) of 2,000 decoded: the property held of enough fixes to mean something")
    }

    // MARK: Geometry

    @Test("destination(bearing:distance:) then distance(from:) and bearing(to:) come back, over the whole globe")
    func destinationAndBack() async {
        // Anywhere but within 0.1° of a pole (where a bearing is measured as from the pole's meridian), up to
        // 10,000 km: short of the antipode, where the shortest path is not unique.
        let start = zip(Gen.double(in: -89.9...89.9), Gen.double(in: -180..<180))
            .map { Location.Coordinate(latitude: $0, longitude: $1) }
        await propertyCheck(count: 2_000, input: start, Gen.double(in: 0..<360), Gen.double(in: 1...10_000_000)) {
            start, bearing, distance in
            let end = start.destination(bearing: bearing, distance: distance)
            #expect((-90...90).contains(end.latitude) && (-180..<180).contains(end.longitude), "\(end)")
            let back = start.distance(from: end)
            #expect(abs(back - distance) <= 0.001 + distance * 1e-9, "\(distance) m out, \(back) m back to \(start)")
            let turn = abs(remainder(start.bearing(to: end) - bearing, 360))
            #expect(turn <= 1e-6 + 0.01 / distance, "bearing \(bearing), back \(start.bearing(to: end)) over \(distance) m")
        }
    }

    @Test("offset(from:) then location(atOffset:) comes back to the millimetre")
    func offsetAndBack() async {
        let start = zip(Gen.double(in: -89.9...89.9), Gen.double(in: -180..<180))
            .map { Location.Coordinate(latitude: $0, longitude: $1) }
        let altitude = Gen.double(in: -1_000...10_000)
        let step = Gen.double(in: -0.05...0.05)
        await propertyCheck(count: 2_000, input: start, altitude, step, step, altitude) { base, height, dLat, dLon, other in
            let reference = Location(coordinate: base, ellipsoidalAltitude: height)
            let target = Location(
                coordinate: .init(latitude: min(90, max(-90, base.latitude + dLat)), longitude: base.longitude + dLon),
                ellipsoidalAltitude: other)
            let back = reference.location(atOffset: target.offset(from: reference))
            #expect(back.distance(from: target) <= 0.001, "\(back.coordinate) for \(target.coordinate)")
            #expect(abs((back.ellipsoidalAltitude ?? .nan) - other) <= 0.001)
        }
    }
}

import Foundation
import GPSDTestSupport
import Testing

/// The fixes of a fixture log (`NAME.expected.json`), by time.
struct ExpectedTrack: Sendable {
    let name: String
    let fixes: [ExpectedFix]
    private let indexByTime: [String: Int]

    init(_ name: String) throws {
        self.name = name
        fixes = try ExpectedFix.load("\(name).expected.json")
        indexByTime = Dictionary(fixes.enumerated().map { ($1.time, $0) }, uniquingKeysWith: { first, _ in first })
    }

    var times: [String] { fixes.map(\.time) }

    /// The position of the epoch with this time in the log.
    func index(of time: String?) -> Int? { time.flatMap { indexByTime[$0] } }
}

/// A fix as one of whereami's formats wrote it, reduced to what can be compared with the fixture.
struct Record: Sendable, CustomStringConvertible {
    var timestamp: String?
    var latitude: Double
    var longitude: Double
    var altitude: Double?
    var speed: Double?
    var course: Double?
    /// "2D" or "3D".
    var fix: String?
    /// A GeoJSON position's third coordinate: metres above the WGS84 ellipsoid.
    var height: Double? = nil

    var description: String {
        "\(timestamp ?? "-") \(latitude),\(longitude) alt \(altitude.map { "\($0)" } ?? "-") speed "
            + "\(speed.map { "\($0)" } ?? "-") course \(course.map { "\($0)" } ?? "-") \(fix ?? "-")"
    }
}

/// What a format carries of a fix, so absent fields are told apart from fields the format has no place for.
struct Carries: OptionSet, Sendable {
    let rawValue: Int
    static let altitude = Carries(rawValue: 1)
    static let motion = Carries(rawValue: 2)
    static let fix = Carries(rawValue: 4)
    static let all: Carries = [.altitude, .motion, .fix]
}

/// Checks that `record` is one epoch of `track`, matched by its timestamp: coordinates to 1e-6°, altitude (MSL,
/// none on a 2D fix) to 1 mm, speed to 1 mm/s, course to 1e-6°, and the fix's dimension.
func expectRecord(
    _ record: Record, isAnEpochOf track: ExpectedTrack, carries: Carries = .all, coordinateTolerance: Double = 1e-6,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    guard let index = track.index(of: record.timestamp) else {
        Issue.record("\(record) is no epoch of \(track.name)", sourceLocation: sourceLocation)
        return
    }
    let want = track.fixes[index]
    #expect(abs(record.latitude - want.latitude) < coordinateTolerance,
            "\(want.time) latitude \(record.latitude) ≠ \(want.latitude)", sourceLocation: sourceLocation)
    #expect(abs(record.longitude - want.longitude) < coordinateTolerance,
            "\(want.time) longitude \(record.longitude) ≠ \(want.longitude)", sourceLocation: sourceLocation)
    if carries.contains(.altitude) {
        if let altitude = want.altitudeMSL, want.mode == 3 {
            #expect(record.altitude.map { abs($0 - altitude) < 1e-3 } == true,
                    "\(want.time) altitude \(record.altitude as Any) ≠ \(altitude)", sourceLocation: sourceLocation)
        } else {
            #expect(record.altitude == nil, "\(want.time) is a 2D fix but has altitude \(record.altitude as Any)",
                    sourceLocation: sourceLocation)
        }
    }
    if carries.contains(.motion) {
        if let speed = want.speed {
            #expect(record.speed.map { abs($0 - speed) < 1e-3 } == true,
                    "\(want.time) speed \(record.speed as Any) ≠ \(speed)", sourceLocation: sourceLocation)
        }
        if let course = want.course {
            #expect(record.course.map { abs($0 - course) < 1e-6 } == true,
                    "\(want.time) course \(record.course as Any) ≠ \(course)", sourceLocation: sourceLocation)
        }
    }
    if carries.contains(.fix) {
        #expect(record.fix == (want.mode == 3 ? "3D" : "2D"), "\(want.time) fix \(record.fix ?? "none")",
                sourceLocation: sourceLocation)
    }
}

/// Checks that `records` are epochs of `track` in the log's order, each once (times strictly increasing).
func expectInOrder(
    _ records: [Record], of track: ExpectedTrack, carries: Carries = .all, sourceLocation: SourceLocation = #_sourceLocation
) {
    for record in records {
        expectRecord(record, isAnEpochOf: track, carries: carries, sourceLocation: sourceLocation)
    }
    let indices = records.map { track.index(of: $0.timestamp) ?? -1 }
    #expect(zip(indices, indices.dropFirst()).allSatisfy { $0 < $1 },
            "times strictly increasing: \(records.map { $0.timestamp ?? "-" })", sourceLocation: sourceLocation)
}

/// Checks that `records` are every epoch of `track`, in order, each once.
func expectWholeTrack(
    _ records: [Record], equals track: ExpectedTrack, carries: Carries = .all,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let times = records.map { $0.timestamp ?? "-" }
    let missing = track.times.filter { !times.contains($0) }
    let extra = times.filter { track.index(of: $0) == nil }
    let isWholeTrack = times == track.times
    let problem = "\(records.count) lines for \(track.fixes.count) fixes of \(track.name); missing \(missing.count): "
        + "\(missing.prefix(12))\(missing.count > 12 ? "…" : ""); not in the log: \(extra.prefix(5))"
    #expect(isWholeTrack, "\(problem)", sourceLocation: sourceLocation)
    expectInOrder(records, of: track, carries: carries, sourceLocation: sourceLocation)
}

public import GPSDLocation
import FoundationEssentials

/// One fix as the fleet sends it: the vehicle, its queue and its sequence number (the three together are the fix's
/// dedupe key) and the fix.
///
/// The payload is one JSON object: OwnTracks' location object (`_type`, `tst`, `lat`, `lon`, `acc`, `alt`, `vac`,
/// `vel` in km/h, `cog`), which many MQTT location consumers already read, with `vehicle`, `queue` and `seq`, and
/// then the fix's own members as ``Location/jsonText`` writes them (times in ISO 8601 with milliseconds, speeds in
/// m/s, every accuracy). `queue` may be missing (an uplink older than it): such fixes share one queue, `""`.
///
/// ```json
/// {"_type":"location","vehicle":"robot-7","queue":"3f9a1c2e5b7d4e60","seq":42,"tst":1748779206,
///  "lat":52.52180605,"lon":13.4133957333,"acc":3,"alt":35,"vel":36,"cog":90,"timestamp":"2025-06-01T12:00:06.000Z",
///  "latitude":52.52180605,…,"fix":"3D","status":"gps"}
/// ```
///
/// ```swift
/// let message = FleetMessage(vehicle: try VehicleID("robot-7"), queue: queueID, seq: 42, location: fix)
/// let bytes = try message.payload()
/// let back = try FleetMessage(payload: bytes, topic: "fleet/robot-7/fix")
/// ```
public struct FleetMessage: Sendable, Equatable {
    /// The vehicle that measured the fix.
    public var vehicle: VehicleID
    /// The queue it was numbered in (``FixQueue``'s identity); nil when the payload had none.
    public var queue: QueueID?
    /// The fix's number in its queue: 1, 2, 3, … in the order the fixes came, never used twice, also across
    /// restarts of the uplink. With ``vehicle`` and ``queue`` it is the fix's key: a fix sent twice is stored once.
    public var seq: Int64
    /// The fix.
    public var location: Location

    /// The largest payload the ingest reads; a fix's is under 1,000 bytes.
    public static let maximumPayloadSize = 4096

    public init(vehicle: VehicleID, queue: QueueID? = nil, seq: Int64, location: Location) {
        self.vehicle = vehicle
        self.queue = queue
        self.seq = seq
        self.location = location
    }

    /// The payload: the JSON object above, in UTF-8. A fix with no calendar time or a non-finite position cannot be
    /// sent (``FleetError/unsendableFix(_:)``); no fix from gpsd is such.
    public func payload() throws(FleetError) -> [UInt8] {
        let latitude = location.coordinate.latitude, longitude = location.coordinate.longitude
        guard latitude.isFinite, longitude.isFinite else { throw .unsendableFix("its position is not finite") }
        let seconds = location.timestamp.timeIntervalSince1970
        guard seconds.isFinite, GPSDTime.string(from: location.timestamp) != nil else {
            throw .unsendableFix("its time has no calendar date")
        }
        var text = "{\"_type\":\"location\",\"vehicle\":"
        text += JSONText.quoted(vehicle.rawValue)
        if let queue { text += ",\"queue\":\"\(queue.rawValue)\"" }
        text += ",\"seq\":\(seq),\"tst\":\(Int64(seconds.rounded(.down)))"
        text += ",\"lat\":" + JSONText.number(latitude) + ",\"lon\":" + JSONText.number(longitude)
        // OwnTracks' integers: metres, km/h and degrees.
        func integer(_ key: String, _ value: Double?) {
            if let value, value.isFinite, abs(value) < 1e15 { text += ",\"\(key)\":\(Int64(value.rounded()))" }
        }
        integer("acc", location.horizontalAccuracy)
        integer("alt", location.altitude)
        integer("vac", location.verticalAccuracy)
        integer("vel", location.speed.map { $0 * 3.6 })
        integer("cog", location.course)
        // The fix's own object, its opening brace replaced by the comma that joins it.
        let fix = location.jsonText
        text += ","
        text += fix.dropFirst()
        return Array(text.utf8)
    }

    /// Reads a payload that came on `topic`. Throws ``FleetRejection`` for anything that is not a fix of the topic's
    /// vehicle with values that can be true: another topic, a payload that is not such a JSON object, a missing
    /// member, a value that cannot be true (latitude 91, a 13th month, a negative accuracy, sequence number 0), or
    /// another vehicle in the payload than in the topic.
    public init(payload: some Collection<UInt8>, topic: some StringProtocol) throws(FleetRejection) {
        guard let vehicle = FleetTopic.vehicle(inFixTopic: topic) else { throw .notAFixTopic }
        guard payload.count <= Self.maximumPayloadSize else { throw .tooLarge }
        let wire: Wire
        do {
            wire = try JSONDecoder().decode(Wire.self, from: Data(payload))
        } catch let error as FleetRejection {
            throw error
        } catch let error as DecodingError {
            throw FleetRejection(error)
        } catch {
            throw .notJSON
        }
        guard wire.vehicle == vehicle else { throw .vehicleMismatch }
        self.init(vehicle: wire.vehicle, queue: wire.queue, seq: wire.seq, location: wire.location)
    }
}

/// Why the ingest refused a message. Each is counted under its ``reason`` and logged once.
public enum FleetRejection: Error, Sendable, Hashable, CustomStringConvertible {
    /// The topic is not `fleet/<vehicle>/fix` with a valid vehicle name.
    case notAFixTopic
    /// The payload is larger than ``FleetMessage/maximumPayloadSize``.
    case tooLarge
    /// The payload is not a JSON object (or not UTF-8, or cut short).
    case notJSON
    /// The payload is not a fleet fix: `_type` is not `location`.
    case notALocation
    /// A member a fix needs is missing: `vehicle`, `seq`, `timestamp`, `latitude` or `longitude`.
    case missing(String)
    /// A member's value cannot be true, or is of the wrong JSON type.
    case impossible(String)
    /// The payload names another vehicle than its topic.
    case vehicleMismatch

    /// A short name for counting: `not_a_fix_topic`, `too_large`, `not_json`, `not_a_location`, `missing_<member>`,
    /// `impossible_<member>`, `vehicle_mismatch`.
    public var reason: String {
        switch self {
        case .notAFixTopic: "not_a_fix_topic"
        case .tooLarge: "too_large"
        case .notJSON: "not_json"
        case .notALocation: "not_a_location"
        case .missing(let member): "missing_\(member)"
        case .impossible(let member): "impossible_\(member)"
        case .vehicleMismatch: "vehicle_mismatch"
        }
    }

    public var description: String {
        switch self {
        case .notAFixTopic: "not a fleet/<vehicle>/fix topic"
        case .tooLarge: "payload larger than \(FleetMessage.maximumPayloadSize) bytes"
        case .notJSON: "payload is not a JSON object"
        case .notALocation: "payload is not a location (_type)"
        case .missing(let member): "payload has no \(member)"
        case .impossible(let member): "payload's \(member) cannot be true"
        case .vehicleMismatch: "payload's vehicle is not the topic's"
        }
    }

    /// The member a decoding error names: the innermost key of its path.
    init(_ error: DecodingError) {
        switch error {
        case .keyNotFound(let key, _):
            self = .missing(key.stringValue)
        case .dataCorrupted(let context) where context.codingPath.isEmpty:
            self = .notJSON
        case .dataCorrupted(let context), .typeMismatch(_, let context), .valueNotFound(_, let context):
            self = context.codingPath.last.map { .impossible($0.stringValue) } ?? .notJSON
        @unknown default:
            self = .notJSON
        }
    }
}

/// The payload as read: the fleet's members, then the fix's own (``Location``'s `init(from:)`, which refuses every
/// value that cannot be true).
private struct Wire: Decodable {
    let vehicle: VehicleID
    let queue: QueueID?
    let seq: Int64
    let location: Location

    private enum Key: String, CodingKey {
        case type = "_type", vehicle, queue, seq
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        guard try container.decode(String.self, forKey: .type) == "location" else { throw FleetRejection.notALocation }
        let name = try container.decode(String.self, forKey: .vehicle)
        guard let vehicle = try? VehicleID(name) else {
            throw DecodingError.dataCorruptedError(forKey: .vehicle, in: container, debugDescription: "not a vehicle name")
        }
        if let text = try container.decodeIfPresent(String.self, forKey: .queue) {
            guard let queue = try? QueueID(text) else {
                throw DecodingError.dataCorruptedError(forKey: .queue, in: container, debugDescription: "not a queue identity")
            }
            self.queue = queue
        } else {
            queue = nil
        }
        let seq = try container.decode(Int64.self, forKey: .seq)
        guard seq >= 1 else {
            throw DecodingError.dataCorruptedError(forKey: .seq, in: container, debugDescription: "sequence numbers start at 1")
        }
        self.vehicle = vehicle
        self.seq = seq
        self.location = try Location(from: decoder)
    }
}

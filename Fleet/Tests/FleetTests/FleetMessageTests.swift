import FleetCore
import Foundation
import GPSDLocation
import Testing

@Suite struct FleetMessageTests {
    let vehicle = try! VehicleID("robot-7")
    let fix = Location(coordinate: .init(latitude: 52.52180605, longitude: 13.4133957333), altitude: 35.04,
                       horizontalAccuracy: 3.2, verticalAccuracy: 5.1, speed: 10, course: 90.4, climb: 0.25,
                       timestamp: Date(timeIntervalSince1970: 1_748_779_206.5), fix: .threeDimensional, status: .dgps)

    @Test func payloadReadsBackToTheSameFix() throws {
        let message = FleetMessage(vehicle: vehicle, seq: 42, location: fix)
        let back = try FleetMessage(payload: try message.payload(), topic: "fleet/robot-7/fix")
        #expect(back == message)
    }

    @Test func theQueuesIdentityTravelsInThePayloadAndMayBeMissing() throws {
        let queue = try QueueID("3f9a1c2e5b7d4e60")
        let message = FleetMessage(vehicle: vehicle, queue: queue, seq: 42, location: fix)
        let payload = try message.payload()
        #expect(String(decoding: payload, as: UTF8.self).hasPrefix(
            #"{"_type":"location","vehicle":"robot-7","queue":"3f9a1c2e5b7d4e60","seq":42,"#))
        #expect(try FleetMessage(payload: payload, topic: "fleet/robot-7/fix") == message)
        let without = try FleetMessage(payload: try FleetMessage(vehicle: vehicle, seq: 42, location: fix).payload(),
                                       topic: "fleet/robot-7/fix")
        #expect(without.queue == nil)
    }

    @Test(arguments: ["", "3F9A1C2E5B7D4E60", "3f9a1c2e5b7d4e6", "3f9a1c2e5b7d4e600", "3f9a1c2e5b7d4e6g", "../../x"])
    func aQueueIdentityThatCannotBeOneIsRefused(_ text: String) throws {
        #expect(throws: FleetError.invalidQueue(String(text.prefix(32)))) { try QueueID(text) }
        let good = String(decoding: try FleetMessage(vehicle: vehicle, seq: 1, location: fix).payload(), as: UTF8.self)
        let bad = good.replacingOccurrences(of: #""seq":1,"#, with: #""queue":"\#(text)","seq":1,"#)
        #expect(throws: FleetRejection.impossible("queue")) {
            try FleetMessage(payload: Array(bad.utf8), topic: "fleet/robot-7/fix")
        }
    }

    @Test func randomIdentitiesAreSixteenHexDigitsAndDiffer() throws {
        let ids = (0..<100).map { _ in QueueID.random() }
        #expect(Set(ids).count == 100)
        for id in ids { #expect(try QueueID(id.rawValue) == id) }
    }

    @Test func payloadIsOwnTracksLocation() throws {
        let payload = try FleetMessage(vehicle: vehicle, seq: 42, location: fix).payload()
        let object = try #require(try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any])
        #expect(object["_type"] as? String == "location")
        #expect(object["tst"] as? Int == 1_748_779_206)
        #expect(object["lat"] as? Double == 52.52180605)
        #expect(object["lon"] as? Double == 13.4133957333)
        #expect(object["acc"] as? Int == 3)
        #expect(object["alt"] as? Int == 35)
        #expect(object["vac"] as? Int == 5)
        #expect(object["vel"] as? Int == 36, "km/h")
        #expect(object["cog"] as? Int == 90)
        #expect(object["vehicle"] as? String == "robot-7")
        #expect(object["seq"] as? Int == 42)
        #expect(object["timestamp"] as? String == "2025-06-01T12:00:06.500Z")
        #expect(object["speed"] as? Double == 10)
        #expect(object["status"] as? String == "dgps")
    }

    @Test func unknownValuesAreLeftOut() throws {
        let bare = Location(coordinate: .init(latitude: 1, longitude: 2), timestamp: fix.timestamp, fix: .twoDimensional)
        let payload = String(decoding: try FleetMessage(vehicle: vehicle, seq: 1, location: bare).payload(), as: UTF8.self)
        for key in ["\"acc\"", "\"alt\"", "\"vac\"", "\"vel\"", "\"cog\"", "\"altitude\"", "\"speed\""] {
            #expect(!payload.contains(key), "\(key) in \(payload)")
        }
        let back = try FleetMessage(payload: Array(payload.utf8), topic: "fleet/robot-7/fix")
        #expect(back.location.altitude == nil && back.location.fix == .twoDimensional)
    }

    @Test func unsendableFixesAreRefused() {
        var nowhere = fix
        nowhere.coordinate.latitude = .nan
        #expect(throws: FleetError.self) { try FleetMessage(vehicle: vehicle, seq: 1, location: nowhere).payload() }
        var timeless = fix
        timeless.timestamp = Date(timeIntervalSince1970: .infinity)
        #expect(throws: FleetError.self) { try FleetMessage(vehicle: vehicle, seq: 1, location: timeless).payload() }
    }

    /// Each way a payload can be wrong, with the reason it is counted under.
    @Test(arguments: [
        ("fleet/robot-7/fix", "not json", "not_json"),
        ("fleet/robot-7/fix", "", "not_json"),
        ("fleet/robot-7/fix", "[1,2]", "not_json"),
        ("fleet/robot-7/fix", "{}", "missing__type"),
        ("fleet/robot-7/fix", #"{"_type":"waypoint"}"#, "not_a_location"),
        ("fleet/robot-7/fix", #"{"_type":"location","seq":1}"#, "missing_vehicle"),
        ("fleet/robot-7/fix", #"{"_type":"location","vehicle":"robot-7"}"#, "missing_seq"),
        ("fleet/robot-7/fix", #"{"_type":"location","vehicle":"robot-7","seq":0}"#, "impossible_seq"),
        ("fleet/robot-7/fix", #"{"_type":"location","vehicle":"robot-7","seq":-5}"#, "impossible_seq"),
        ("fleet/robot-7/fix", #"{"_type":"location","vehicle":"robot-7","seq":"1"}"#, "impossible_seq"),
        ("fleet/robot-7/fix", #"{"_type":"location","vehicle":"a/b","seq":1}"#, "impossible_vehicle"),
        ("fleet/robot-7/fix", #"{"_type":"location","vehicle":"robot-7","seq":1,"timestamp":"2025-06-01T12:00:00.000Z","latitude":91,"longitude":0}"#, "impossible_latitude"),
        ("fleet/robot-7/fix", #"{"_type":"location","vehicle":"robot-7","seq":1,"timestamp":"2025-13-01T12:00:00.000Z","latitude":1,"longitude":0}"#, "impossible_timestamp"),
        ("fleet/robot-7/fix", #"{"_type":"location","vehicle":"robot-7","seq":1,"timestamp":"2025-06-01T12:00:00.000Z","latitude":1,"longitude":0,"horizontalAccuracy":-1}"#, "impossible_horizontalAccuracy"),
        ("fleet/robot-7/fix", #"{"_type":"location","vehicle":"robot-7","seq":1,"timestamp":"2025-06-01T12:00:00.000Z","longitude":0}"#, "missing_latitude"),
        ("fleet/robot-8/fix", #"{"_type":"location","vehicle":"robot-7","seq":1,"timestamp":"2025-06-01T12:00:00.000Z","latitude":1,"longitude":0}"#, "vehicle_mismatch"),
        ("fleet/robot 7/fix", #"{"_type":"location","vehicle":"robot-7","seq":1,"timestamp":"2025-06-01T12:00:00.000Z","latitude":1,"longitude":0}"#, "not_a_fix_topic"),
        ("fleet/robot-7/state", #"{"_type":"location","vehicle":"robot-7","seq":1,"timestamp":"2025-06-01T12:00:00.000Z","latitude":1,"longitude":0}"#, "not_a_fix_topic"),
        ("fleet/robot-7/fix", String(repeating: "[", count: 5000), "too_large"),
        ("fleet/robot-7/fix", String(repeating: "[", count: 3000) + String(repeating: "]", count: 1000), "not_json"),
    ])
    func refusals(topic: String, payload: String, reason: String) {
        #expect {
            _ = try FleetMessage(payload: Array(payload.utf8), topic: topic)
        } throws: { error in
            (error as? FleetRejection)?.reason == reason
        }
    }

    @Test func bytesThatAreNotUTF8AreRefused() {
        #expect(throws: FleetRejection.notJSON) { _ = try FleetMessage(payload: [0xFF, 0xFE, 0x7B], topic: "fleet/a/fix") }
    }

    @Test func vehicleNames() throws {
        #expect(throws: Never.self) { _ = try VehicleID("Robot_7.a-b") }
        for bad in ["", "a/b", "a+b", "#", "robot 7", "ünïcode", String(repeating: "a", count: 65)] {
            #expect(throws: FleetError.invalidVehicle(bad)) { _ = try VehicleID(bad) }
        }
        #expect(FleetTopic.vehicle(inFixTopic: "fleet/robot-7/fix")?.rawValue == "robot-7")
        #expect(FleetTopic.vehicle(inFixTopic: "fleet/robot-7/fix/extra") == nil)
        #expect(FleetTopic.vehicle(inFixTopic: "other/robot-7/fix") == nil)
    }
}

@Suite struct BrokerAddressTests {
    @Test func fullAddress() throws {
        let address = try BrokerAddress(parsing: "mqtts://robot%407:p%3Ass@broker.example.net:8884")
        #expect(address == BrokerAddress(host: "broker.example.net", port: 8884, usesTLS: true, username: "robot@7",
                                         password: "p:ss"))
        #expect(address.description == "mqtts://robot@7:***@broker.example.net:8884")
    }

    @Test func defaults() throws {
        #expect(try BrokerAddress(parsing: "mqtt://127.0.0.1").port == 1883)
        #expect(try BrokerAddress(parsing: "mqtts://127.0.0.1/").port == 8883)
        #expect(try BrokerAddress(parsing: "mqtt://[::1]:1884").host == "::1")
        #expect(try BrokerAddress(parsing: "mqtt://user@host").password == nil)
    }

    @Test(arguments: ["127.0.0.1:1883", "http://host", "mqtt://", "mqtt://host:0", "mqtt://host:70000", "mqtt://host:x",
                      "mqtt://host/path", "mqtt://@host", "mqtt://[::1", "mqtt://u:%zz@host"])
    func refused(_ text: String) {
        #expect(throws: BrokerAddressError.self) { _ = try BrokerAddress(parsing: text) }
    }

    @Test func passwordsAreMaskedInURLs() {
        #expect(maskingPassword(in: "postgresql://fleet:hunter2@127.0.0.1:5432/fleet") == "postgresql://fleet:***@127.0.0.1:5432/fleet")
        #expect(maskingPassword(in: "mqtt://p:a:ss@host") == "mqtt://p:***@host")
        #expect(maskingPassword(in: "mqtt://user@host") == "mqtt://user@host")
        #expect(maskingPassword(in: "not a url: a@b") == "not a url: a@b")
    }

    @Test func errorsHideThePassword() {
        #expect {
            _ = try BrokerAddress(parsing: "mqtt://robot:hunter2@host:99999")
        } throws: { error in
            !String(describing: error).contains("hunter2")
        }
    }
}

import FleetCore
import FleetIngest
import FoundationEssentials
import GPSDLocation
import NIOCore
import NIOEmbedded

/// What each fleet fuzz target does with one input: feed it to a parser the way outside bytes reach it, then hold
/// what came out to what must be true of it. A violation is a `fatalError` naming it, so libFuzzer keeps the input
/// and FleetFuzzCheckTests, which runs these checks over `Fuzz/Corpus` and `Fuzz/FailCases`, fails.
package enum FleetFuzzCheck: String, CaseIterable, Sendable {
    /// The broker's bytes through the ingest's MQTT decoder, whole and split: the first byte chooses the split
    /// (0: whole, n: reads of n bytes), the second the largest Remaining Length read (0: the real one).
    case mqtt
    /// A payload through `FleetMessage(payload:topic:)`; an input that starts `fleet/` gives its topic on its first
    /// line.
    case message
    /// `mqtt[s]://[user[:password]@]host[:port]` through `BrokerAddress(parsing:)`.
    case broker

    /// Runs the check on one input.
    package func run(_ input: [UInt8]) {
        switch self {
        case .mqtt: Self.mqtt(input)
        case .message: Self.message(input)
        case .broker: Self.broker(input)
        }
    }

    private static func require(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { fatalError(message()) }
    }

    // MARK: MQTT

    private static func mqtt(_ input: [UInt8]) {
        guard input.count >= 2 else { return }
        let size = Int(input[0] % 32)
        let maximum = input[1] == 0 ? MQTTFrameDecoder.maximumRemainingLength : Int(input[1])
        let bytes = Array(input.dropFirst(2))
        let whole = decode([bytes], maximum: maximum)
        let chunks = size == 0 ? [bytes] : stride(from: 0, to: bytes.count, by: size).map {
            Array(bytes[$0..<min($0 + size, bytes.count)])
        }
        let split = decode(chunks, maximum: maximum)
        require(whole.packets == split.packets && whole.error == split.error,
                "whole: \(whole), in reads of \(size): \(split)")
        for packet in whole.packets { check(packet, maximum: maximum) }
    }

    /// The packets `chunks` decode to, one read after the other, and the error that stopped them.
    private static func decode(_ chunks: [[UInt8]], maximum: Int) -> (packets: [MQTTPacket], error: MQTTDecodingError?) {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(MQTTFrameDecoder(maximumRemainingLength: maximum)))
        defer { _ = try? channel.finish(acceptAlreadyClosed: true) }
        var packets: [MQTTPacket] = []
        for chunk in chunks {
            do {
                try channel.writeInbound(channel.allocator.buffer(bytes: chunk))
            } catch let error as MQTTDecodingError {
                while let packet = try? channel.readInbound(as: MQTTPacket.self) { packets.append(packet) }
                return (packets, error)
            } catch {
                fatalError("an error that is not an MQTTDecodingError: \(error)")
            }
            while let packet = try? channel.readInbound(as: MQTTPacket.self) { packets.append(packet) }
        }
        return (packets, nil)
    }

    /// A packet holds only what MQTT allows, and its bytes as a broker writes them decode to it again.
    private static func check(_ packet: MQTTPacket, maximum: Int) {
        if case .publish(let message) = packet {
            require(message.packetID != 0, "packet id 0: \(message)")
            require(message.packetID == nil || message.qos == 1, "a packet id at QoS \(message.qos): \(message)")
            switch message.refusal {
            case nil:
                require(message.qos <= 1 && (message.qos == 1) == (message.packetID != nil), "QoS and id: \(message)")
                require(!message.topic.isEmpty && message.topic.utf8.count <= 65_535, "topic: \(message)")
                require(2 + message.topic.utf8.count + 2 * Int(message.qos) + message.payload.count <= maximum,
                        "a message longer than \(maximum): \(message)")
            case .tooLarge(let length):
                require(length > maximum && message.payload.isEmpty, "refused as too large: \(message)")
            case .malformed:
                require(message.payload.isEmpty, "refused with a payload: \(message)")
            }
            guard message.refusal == nil else { return }
        }
        if case .suback(_, let codes) = packet {
            require(!codes.isEmpty && codes.allSatisfy { $0 <= 2 || $0 == 0x80 }, "SUBACK codes \(codes)")
        }
        let again = decode([encode(packet)], maximum: maximum)
        require(again.packets == [packet] && again.error == nil, "\(packet) written and read is \(again)")
    }

    /// The bytes a broker writes for `packet`.
    private static func encode(_ packet: MQTTPacket) -> [UInt8] {
        func id(_ id: UInt16) -> [UInt8] { [UInt8(id >> 8), UInt8(id & 0xFF)] }
        let header: UInt8, body: [UInt8]
        switch packet {
        case .connack(let sessionPresent, let code): (header, body) = (0x20, [sessionPresent ? 1 : 0, code])
        case .suback(let packetID, let codes): (header, body) = (0x90, id(packetID) + codes)
        case .unsuback(let packetID): (header, body) = (0xB0, id(packetID))
        case .puback(let packetID): (header, body) = (0x40, id(packetID))
        case .pingresp: (header, body) = (0xD0, [])
        case .publish(let message):
            let topic = Array(message.topic.utf8)
            header = 0x30 | message.qos << 1 | (message.isDuplicate ? 0x08 : 0) | (message.isRetained ? 0x01 : 0)
            body = id(UInt16(topic.count)) + topic + (message.packetID.map(id) ?? []) + message.payload
        }
        var length = body.count, lengthBytes: [UInt8] = []
        repeat {
            lengthBytes.append(UInt8(length & 0x7F) | (length > 0x7F ? 0x80 : 0))
            length >>= 7
        } while length > 0
        return [header] + lengthBytes + body
    }

    // MARK: Fleet messages

    private static func message(_ input: [UInt8]) {
        var topic = "fleet/robot-7/fix"
        var payload = input[...]
        if input.starts(with: Array("fleet/".utf8)), let newline = input.firstIndex(of: 0x0A) {
            topic = String(decoding: input[..<newline], as: UTF8.self)
            payload = input[(newline + 1)...]
        }
        guard let message = try? FleetMessage(payload: payload, topic: topic) else { return }
        require(message.seq >= 1 && FleetTopic.vehicle(inFixTopic: topic) == message.vehicle, "accepted \(message)")
        // Its payload reads back as the same message (times to the millisecond), and again as exactly that.
        let once = readBack(message, topic: topic)
        require(once.vehicle == message.vehicle && once.seq == message.seq
                && sameExceptTime(once.location, message.location), "\(message) reads back as \(once)")
        require(readBack(once, topic: topic) == once, "not stable: \(once)")
    }

    private static func readBack(_ message: FleetMessage, topic: String) -> FleetMessage {
        let payload: [UInt8]
        do {
            payload = try message.payload()
        } catch {
            fatalError("accepted, but its payload cannot be written: \(error): \(message)")
        }
        do {
            return try FleetMessage(payload: payload, topic: topic)
        } catch {
            fatalError("its payload does not read back: \(error): \(String(decoding: payload, as: UTF8.self))")
        }
    }

    private static func sameExceptTime(_ a: Location, _ b: Location) -> Bool {
        var (a, b) = (a, b)
        if abs(a.timestamp.timeIntervalSince(b.timestamp)) > 0.000_5 + 1e-6 { return false }
        (a.timestamp, b.timestamp) = (b.timestamp, b.timestamp)
        return a == b
    }

    // MARK: Broker addresses

    private static func broker(_ input: [UInt8]) {
        let text = String(decoding: input, as: UTF8.self)
        guard let address = try? BrokerAddress(parsing: text) else { return }
        require(address.port > 0 && !address.host.isEmpty && address.username?.isEmpty != true, "accepted \(address)")
        // What it prints (the password masked) reads back as the same address, the password as the mask.
        var expected = address
        if expected.password != nil { expected.password = "***" }
        do {
            let again = try BrokerAddress(parsing: address.description)
            require(again == expected, "'\(text)' is \(address), which reads back as \(again)")
        } catch {
            fatalError("'\(text)' is \(address), which does not read back: \(error)")
        }
    }
}

@testable import FleetIngest
import NIOCore
import NIOEmbedded
import NIOTestUtils
import Testing

/// The ingest's MQTT decoder as a value: bytes in, packets or a typed error out, however the bytes are split.
@Suite("MQTTCodec")
struct MQTTCodecTests {
    /// Every packet type a broker sends a subscriber, with the bytes that carry it.
    static let packets: [(bytes: [UInt8], packet: MQTTPacket)] = [
        ([0x20, 0x02, 0x00, 0x00], .connack(sessionPresent: false, returnCode: 0)),
        ([0x20, 0x02, 0x01, 0x00], .connack(sessionPresent: true, returnCode: 0)),
        ([0x20, 0x02, 0x00, 0x05], .connack(sessionPresent: false, returnCode: 5)),
        (publish(0x30, topic: "fleet/r1/fix", payload: "{}"), .publish(message("fleet/r1/fix", "{}"))),
        (publish(0x31, topic: "fleet/r1/fix", payload: "kept"), .publish(message("fleet/r1/fix", "kept", retained: true))),
        (publish(0x32, topic: "fleet/r1/fix", packetID: 7, payload: "one"),
         .publish(message("fleet/r1/fix", "one", packetID: 7))),
        (publish(0x33, topic: "fleet/r2/fix", packetID: 0xFFFF, payload: "kept one"),
         .publish(message("fleet/r2/fix", "kept one", packetID: 0xFFFF, retained: true))),
        (publish(0x3A, topic: "fleet/r1/fix", packetID: 8, payload: "again"),
         .publish(message("fleet/r1/fix", "again", packetID: 8, duplicate: true))),
        (publish(0x30, topic: "t", payload: ""), .publish(message("t", ""))),
        // 300 bytes of payload: a Remaining Length of two bytes.
        (publish(0x32, topic: "fleet/r1/fix", packetID: 9, payload: String(repeating: "x", count: 300)),
         .publish(message("fleet/r1/fix", String(repeating: "x", count: 300), packetID: 9))),
        ([0x90, 0x03, 0x00, 0x01, 0x01], .suback(packetID: 1, returnCodes: [1])),
        ([0x90, 0x04, 0x12, 0x34, 0x00, 0x80], .suback(packetID: 0x1234, returnCodes: [0, 0x80])),
        ([0xB0, 0x02, 0x00, 0x07], .unsuback(packetID: 7)),
        ([0x40, 0x02, 0x12, 0x34], .puback(packetID: 0x1234)),
        ([0xD0, 0x00], .pingresp),
    ]

    @Test("each packet type decodes from its bytes", arguments: 0..<packets.count)
    func decodesEachPacket(index: Int) throws {
        let (bytes, packet) = Self.packets[index]
        #expect(try Self.decode([bytes]) == [packet])
    }

    @Test("every packet, one after the other, split into chunks of 1 to 17 bytes, comes out whole and in order")
    func splitAcrossReads() throws {
        let stream = Self.packets.flatMap(\.bytes)
        for size in 1...17 {
            let chunks = stride(from: 0, to: stream.count, by: size).map { Array(stream[$0..<min($0 + size, stream.count)]) }
            #expect(try Self.decode(chunks) == Self.packets.map(\.packet), "chunks of \(size)")
        }
    }

    @Test("NIO's decoder verifier: drip-fed, one by one, all at once")
    func verifier() throws {
        let allocator = ByteBufferAllocator()
        try ByteToMessageDecoderVerifier.verifyDecoder(
            inputOutputPairs: Self.packets.map { (allocator.buffer(bytes: $0.bytes), [$0.packet]) },
            decoderFactory: { MQTTFrameDecoder() })
    }

    @Test("malformed input is a typed error", arguments: [
        ([0x21, 0x02, 0x00, 0x00], .reservedFlags(packet: "CONNACK", flags: 1)),
        ([0x20, 0x01, 0x00], .malformed("CONNACK")),
        ([0x20, 0x03, 0x00, 0x00, 0x00], .malformed("CONNACK")),
        ([0x20, 0x02, 0x02, 0x00], .malformed("CONNACK")),  // reserved acknowledge flags
        ([0x30, 0x80, 0x80, 0x80, 0x80, 0x01], .remainingLengthTooLong),
        ([0x90, 0xFF, 0xFF, 0xFF, 0x7F], .packetTooLarge(remainingLength: 268_435_455,
                                                         maximum: MQTTFrameDecoder.maximumRemainingLength)),
        ([0x36, 0x03, 0x00, 0x01, 0x61], .malformed("PUBLISH (QoS 3)")),
        ([0x34, 0x05, 0x00, 0x01, 0x61, 0x00, 0x01], .qos2Publish),
        ([0x30, 0x03, 0x00, 0x10, 0x61], .malformed("PUBLISH (topic)")),  // a topic longer than the packet
        ([0x30, 0x01, 0x00], .malformed("PUBLISH (topic)")),
        ([0x30, 0x02, 0x00, 0x00], .malformed("PUBLISH (topic not UTF-8 or empty)")),
        ([0x30, 0x03, 0x00, 0x01, 0xFF], .malformed("PUBLISH (topic not UTF-8 or empty)")),
        ([0x32, 0x05, 0x00, 0x01, 0x61, 0x00, 0x00], .malformed("PUBLISH (packet id)")),  // packet id 0
        ([0x32, 0x04, 0x00, 0x01, 0x61, 0x00], .malformed("PUBLISH (packet id)")),  // half a packet id
        ([0x40, 0x01, 0x00], .malformed("PUBACK")),
        ([0x42, 0x02, 0x00, 0x01], .reservedFlags(packet: "PUBACK", flags: 2)),
        ([0x90, 0x02, 0x00, 0x01], .malformed("SUBACK")),  // no return code
        ([0x90, 0x03, 0x00, 0x01, 0x03], .malformed("SUBACK")),  // return code 3
        ([0x92, 0x03, 0x00, 0x01, 0x01], .reservedFlags(packet: "SUBACK", flags: 2)),
        ([0xB0, 0x03, 0x00, 0x01, 0x00], .malformed("UNSUBACK")),
        ([0xD0, 0x01, 0x00], .malformed("PINGRESP")),
        ([0xD1, 0x00], .reservedFlags(packet: "PINGRESP", flags: 1)),
        ([0x00, 0x00], .unexpectedType(0)),
        ([0x10, 0x00], .unexpectedType(1)),  // CONNECT
        ([0xF0, 0x00], .unexpectedType(15)),
    ] as [([UInt8], MQTTDecodingError)])
    func malformed(bytes: [UInt8], error: MQTTDecodingError) {
        #expect(throws: error) { try Self.decode([bytes]) }
        // Split after its first byte, the same error once the rest comes.
        #expect(throws: error) { try Self.decode([Array(bytes.prefix(1)), Array(bytes.dropFirst())]) }
    }

    @Test("a packet cut short is no packet yet, and no error")
    func cutShort() throws {
        for (bytes, _) in Self.packets {
            #expect(try Self.decode([Array(bytes.dropLast())]) == [])
        }
    }

    @Test("the Remaining Length at its limit is read; one byte over is refused")
    func lengthLimit() throws {
        let decoder = { MQTTFrameDecoder(maximumRemainingLength: 10) }
        let atLimit = Self.publish(0x30, topic: "t", payload: "1234567")  // 3 + 7 = 10
        #expect(try Self.decode([atLimit], decoder: decoder()) == [.publish(Self.message("t", "1234567"))])
        let over = Self.publish(0x30, topic: "t", payload: "12345678")
        #expect(throws: MQTTDecodingError.packetTooLarge(remainingLength: 11, maximum: 10)) {
            try Self.decode([over], decoder: decoder())
        }
    }

    // MARK: Helpers

    /// The packets `chunks` decode to, fed one after the other through a `ByteToMessageHandler`.
    static func decode(_ chunks: [[UInt8]], decoder: MQTTFrameDecoder = MQTTFrameDecoder()) throws -> [MQTTPacket] {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(decoder))
        defer { _ = try? channel.finish() }
        var packets: [MQTTPacket] = []
        for chunk in chunks {
            try channel.writeInbound(channel.allocator.buffer(bytes: chunk))
            while let packet = try channel.readInbound(as: MQTTPacket.self) { packets.append(packet) }
        }
        return packets
    }

    /// A PUBLISH's bytes: `header`, the Remaining Length, the topic, the packet id if given, the payload.
    static func publish(_ header: UInt8, topic: String, packetID: UInt16? = nil, payload: String) -> [UInt8] {
        var body: [UInt8] = [UInt8(topic.utf8.count >> 8), UInt8(topic.utf8.count & 0xFF)] + Array(topic.utf8)
        if let packetID { body += [UInt8(packetID >> 8), UInt8(packetID & 0xFF)] }
        body += Array(payload.utf8)
        return [header] + remainingLength(body.count) + body
    }

    static func remainingLength(_ count: Int) -> [UInt8] {
        var length = count, bytes: [UInt8] = []
        repeat {
            var byte = UInt8(length & 0x7F)
            length >>= 7
            if length > 0 { byte |= 0x80 }
            bytes.append(byte)
        } while length > 0
        return bytes
    }

    static func message(_ topic: String, _ payload: String, packetID: UInt16? = nil, duplicate: Bool = false,
                        retained: Bool = false) -> MQTTMessage {
        MQTTMessage(topic: topic, payload: Array(payload.utf8), packetID: packetID, qos: packetID == nil ? 0 : 1,
                    isDuplicate: duplicate, isRetained: retained)
    }
}

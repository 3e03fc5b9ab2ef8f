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
        ([0xB0, 0xFF, 0xFF, 0xFF, 0x7F], .packetTooLarge(remainingLength: 268_435_455,
                                                         maximum: MQTTFrameDecoder.maximumRemainingLength)),
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

    /// A PUBLISH whose length is sound but whose body cannot be read: refused, with what can be read of it.
    static let malformedPublishes: [(bytes: [UInt8], message: MQTTMessage)] = [
        ([0x36, 0x03, 0x00, 0x01, 0x61], refused("a", qos: 3, "PUBLISH (QoS 3)")),
        ([0x34, 0x05, 0x00, 0x01, 0x61, 0x00, 0x01], refused("a", qos: 2, "PUBLISH at QoS 2 (only QoS 0 and 1 are supported)")),
        ([0x30, 0x03, 0x00, 0x10, 0x61], refused("", qos: 0, "PUBLISH (topic)")),  // a topic longer than the packet
        ([0x30, 0x01, 0x00], refused("", qos: 0, "PUBLISH (topic)")),
        ([0x30, 0x00], refused("", qos: 0, "PUBLISH (topic)")),
        ([0x30, 0x02, 0x00, 0x00], refused("", qos: 0, "PUBLISH (topic not UTF-8 or empty)")),
        ([0x30, 0x03, 0x00, 0x01, 0xFF], refused("", qos: 0, "PUBLISH (topic not UTF-8 or empty)")),
        // The packet id can be read: it is there to acknowledge the message.
        ([0x32, 0x05, 0x00, 0x01, 0xFF, 0x00, 0x09], refused("", qos: 1, packetID: 9, "PUBLISH (topic not UTF-8 or empty)")),
        ([0x32, 0x05, 0x00, 0x01, 0x61, 0x00, 0x00], refused("a", qos: 1, "PUBLISH (packet id)")),  // packet id 0
        ([0x32, 0x04, 0x00, 0x01, 0x61, 0x00], refused("a", qos: 1, "PUBLISH (packet id)")),  // half a packet id
    ]

    @Test("a PUBLISH malformed within a sound length comes out refused, and the stream reads on",
          arguments: 0..<malformedPublishes.count)
    func malformedPublish(index: Int) throws {
        let (bytes, message) = Self.malformedPublishes[index]
        #expect(try Self.decode([bytes + [0xD0, 0x00]]) == [.publish(message), .pingresp])
        #expect(try Self.decode((bytes + [0xD0, 0x00]).map { [$0] }) == [.publish(message), .pingresp])
    }

    @Test("a packet cut short is no packet yet, and no error")
    func cutShort() throws {
        for (bytes, _) in Self.packets {
            #expect(try Self.decode([Array(bytes.dropLast())]) == [])
        }
    }

    @Test("the Remaining Length at its limit is read; one byte over is delivered unread")
    func lengthLimit() throws {
        let decoder = { MQTTFrameDecoder(maximumRemainingLength: 10) }
        let atLimit = Self.publish(0x30, topic: "t", payload: "1234567")  // 3 + 7 = 10
        #expect(try Self.decode([atLimit], decoder: decoder()) == [.publish(Self.message("t", "1234567"))])
        let over = Self.publish(0x30, topic: "t", payload: "12345678")
        #expect(try Self.decode([over], decoder: decoder()) == [.publish(MQTTMessage(
            topic: "t", payload: [], packetID: nil, qos: 0, isDuplicate: false, isRetained: false,
            refusal: .tooLarge(remainingLength: 11)))])
    }

    @Test("a PUBLISH over the maximum, then a valid one: the first comes out unread with its packet id, the second whole")
    func oversizedThenValid() throws {
        let big = Self.publish(0x32, topic: "fleet/big/fix", packetID: 7, payload: String(repeating: "x", count: 5000))
        let valid = Self.publish(0x32, topic: "fleet/r1/fix", packetID: 8, payload: "{}")
        let stream = big + valid
        for size in [stream.count, 1, 2, 3, 17, 100, 4096] {
            let chunks = stride(from: 0, to: stream.count, by: size).map { Array(stream[$0..<min($0 + size, stream.count)]) }
            let packets = try Self.decode(chunks, decoder: MQTTFrameDecoder(maximumRemainingLength: 100))
            try #require(packets.count == 2, "chunks of \(size): \(packets)")
            guard case .publish(let refused) = packets[0] else { Issue.record("\(packets[0])"); continue }
            #expect(refused.topic == "fleet/big/fix" && refused.packetID == 7 && refused.qos == 1 && refused.payload.isEmpty)
            #expect(refused.refusal == .tooLarge(remainingLength: big.count - 3))
            #expect(packets[1] == .publish(Self.message("fleet/r1/fix", "{}", packetID: 8)), "chunks of \(size)")
        }
    }

    @Test("a 2 MB PUBLISH at the real maximum, then a valid one, in 64 KiB reads: the valid one comes out")
    func twoMegabytesThenValid() throws {
        let big = Self.publish(0x32, topic: "fleet/big/fix", packetID: 1, payload: String(repeating: "x", count: 2_000_000))
        let stream = big + Self.publish(0x32, topic: "fleet/r1/fix", packetID: 2, payload: "{}")
        let chunks = stride(from: 0, to: stream.count, by: 65_536).map { Array(stream[$0..<min($0 + 65_536, stream.count)]) }
        let packets = try Self.decode(chunks)
        try #require(packets.count == 2, "\(packets)")
        guard case .publish(let refused) = packets[0] else { Issue.record("\(packets[0])"); return }
        #expect(refused.topic == "fleet/big/fix" && refused.packetID == 1 && refused.payload.isEmpty)
        #expect(refused.refusal == .tooLarge(remainingLength: 2_000_017))
        #expect(packets[1] == .publish(Self.message("fleet/r1/fix", "{}", packetID: 2)))
    }

    @Test("an oversized PUBLISH's head is read whatever its QoS and flags; a malformed one is refused as such")
    func oversizedHeads() throws {
        let decoder = { MQTTFrameDecoder(maximumRemainingLength: 8) }
        let payload = String(repeating: "y", count: 20)
        let cases: [([UInt8], MQTTMessage)] = [
            (Self.publish(0x31, topic: "t/1", payload: payload),
             MQTTMessage(topic: "t/1", payload: [], packetID: nil, qos: 0, isDuplicate: false, isRetained: true,
                         refusal: .tooLarge(remainingLength: 25))),
            (Self.publish(0x3B, topic: "t/1", packetID: 3, payload: payload),
             MQTTMessage(topic: "t/1", payload: [], packetID: 3, qos: 1, isDuplicate: true, isRetained: true,
                         refusal: .tooLarge(remainingLength: 27))),
            (Self.publish(0x36, topic: "t/1", payload: payload), Self.refused("t/1", qos: 3, "PUBLISH (QoS 3)")),
            // A topic length beyond the packet: nothing can be read; the whole packet is skipped.
            ([0x30, 0x0A, 0xFF, 0xFF] + [UInt8](repeating: 0x61, count: 8), Self.refused("", qos: 0, "PUBLISH (topic)")),
        ]
        for (bytes, message) in cases {
            #expect(try Self.decode([bytes + [0xD0, 0x00]], decoder: decoder()) == [.publish(message), .pingresp])
            #expect(try Self.decode((bytes + [0xD0, 0x00]).map { [$0] }, decoder: decoder()) == [.publish(message), .pingresp])
        }
    }

    @Test("an oversized packet that is not a PUBLISH is a framing error")
    func oversizedOther() {
        #expect(throws: MQTTDecodingError.packetTooLarge(remainingLength: 9, maximum: 8)) {
            try Self.decode([[0x90, 0x09] + [UInt8](repeating: 0, count: 9)], decoder: MQTTFrameDecoder(maximumRemainingLength: 8))
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

    static func refused(_ topic: String, qos: UInt8, packetID: UInt16? = nil, _ what: String) -> MQTTMessage {
        MQTTMessage(topic: topic, payload: [], packetID: packetID, qos: qos, isDuplicate: false, isRetained: false,
                    refusal: .malformed(what))
    }

    static func message(_ topic: String, _ payload: String, packetID: UInt16? = nil, duplicate: Bool = false,
                        retained: Bool = false) -> MQTTMessage {
        MQTTMessage(topic: topic, payload: Array(payload.utf8), packetID: packetID, qos: packetID == nil ? 0 : 1,
                    isDuplicate: duplicate, isRetained: retained)
    }
}

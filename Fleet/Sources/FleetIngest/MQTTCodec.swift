package import NIOCore

// MQTT 3.1.1 (OASIS Standard, 29 October 2014) as the ingest speaks it: the client's end of CONNECT, SUBSCRIBE,
// PUBACK, PINGREQ and DISCONNECT, and the broker's CONNACK, SUBACK, PUBLISH (QoS 0 and 1), PINGRESP.

/// A packet the broker sent, decoded.
package enum MQTTPacket: Equatable, Sendable {
    case connack(sessionPresent: Bool, returnCode: UInt8)
    case publish(MQTTMessage)
    case suback(packetID: UInt16, returnCodes: [UInt8])
    case unsuback(packetID: UInt16)
    case puback(packetID: UInt16)
    case pingresp
}

/// Splits the byte stream into MQTT control packets: a fixed header (type and flags, then the Remaining Length in
/// one to four bytes of seven bits each, least significant first) and that many bytes (MQTT 3.1.1 section 2.2).
package struct MQTTFrameDecoder: ByteToMessageDecoder {
    package typealias InboundOut = MQTTPacket

    /// The largest Remaining Length read: a 1 MiB payload with the longest topic and a packet id. A larger PUBLISH
    /// is refused (``MQTTRefusal/tooLarge(remainingLength:)``) and skipped as it comes, never buffered; any other
    /// packet that large is a protocol error.
    package static let maximumRemainingLength = (1 << 20) + 2 + 65_535 + 2

    package let maximumRemainingLength: Int
    /// The bytes of a refused PUBLISH still to come, dropped as they arrive.
    private var bytesToSkip = 0

    package init(maximumRemainingLength: Int = MQTTFrameDecoder.maximumRemainingLength) {
        self.maximumRemainingLength = maximumRemainingLength
    }

    package mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        if bytesToSkip > 0 {
            let skipped = min(bytesToSkip, buffer.readableBytes)
            buffer.moveReaderIndex(forwardBy: skipped)
            bytesToSkip -= skipped
            return bytesToSkip == 0 ? .continue : .needMoreData
        }
        guard let header = buffer.getInteger(at: buffer.readerIndex, as: UInt8.self) else { return .needMoreData }
        var length = 0
        var lengthBytes = 0
        while true {
            guard let byte = buffer.getInteger(at: buffer.readerIndex + 1 + lengthBytes, as: UInt8.self) else {
                return .needMoreData
            }
            length |= Int(byte & 0x7F) << (7 * lengthBytes)
            lengthBytes += 1
            if byte & 0x80 == 0 { break }
            if lengthBytes == 4 { throw MQTTDecodingError.remainingLengthTooLong }
        }
        let fixedHeader = 1 + lengthBytes
        guard length <= maximumRemainingLength else {
            // A PUBLISH too large: its head (topic, packet id: 65,539 bytes at most) is read, the rest skipped.
            guard header >> 4 == 3 else {
                throw MQTTDecodingError.packetTooLarge(remainingLength: length, maximum: maximumRemainingLength)
            }
            let available = buffer.getSlice(at: buffer.readerIndex + fixedHeader,
                                            length: buffer.readableBytes - fixedHeader)!
            guard let head = MQTTPublishHead(flags: header & 0x0F, body: available, remainingLength: length) else {
                return .needMoreData
            }
            // A malformed head spans the whole body, which may not have come yet.
            let consumed = min(fixedHeader + head.count, buffer.readableBytes)
            buffer.moveReaderIndex(forwardBy: consumed)
            bytesToSkip = fixedHeader + length - consumed
            let refusal = head.malformation.map(MQTTRefusal.malformed) ?? .tooLarge(remainingLength: length)
            context.fireChannelRead(Self.wrapInboundOut(.publish(head.refused(refusal))))
            return .continue
        }
        guard buffer.readableBytes >= fixedHeader + length else { return .needMoreData }
        buffer.moveReaderIndex(forwardBy: fixedHeader)
        var body = buffer.readSlice(length: length)!
        let packet = try MQTTPacket(header: header, body: &body)
        context.fireChannelRead(Self.wrapInboundOut(packet))
        return .continue
    }

    package mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer,
                             seenEOF: Bool) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        return .needMoreData
    }
}

extension MQTTPacket {
    /// Decodes one packet from its first byte and its `body` (exactly Remaining Length bytes).
    init(header: UInt8, body: inout ByteBuffer) throws(MQTTDecodingError) {
        let type = header >> 4
        let flags = header & 0x0F
        func malformed(_ what: String) -> MQTTDecodingError { .malformed(what) }
        func requireFlags(_ expected: UInt8, _ name: String) throws(MQTTDecodingError) {
            guard flags == expected else { throw .reservedFlags(packet: name, flags: flags) }
        }
        switch type {
        case 2:
            try requireFlags(0, "CONNACK")
            guard body.readableBytes == 2, let acknowledge = body.readInteger(as: UInt8.self),
                  let returnCode = body.readInteger(as: UInt8.self), acknowledge & 0xFE == 0
            else { throw malformed("CONNACK") }
            self = .connack(sessionPresent: acknowledge & 1 == 1, returnCode: returnCode)
        case 3:
            self = .publish(MQTTMessage(publishFlags: flags, body: &body))
        case 4:
            try requireFlags(0, "PUBACK")
            guard body.readableBytes == 2, let id = body.readInteger(as: UInt16.self) else { throw malformed("PUBACK") }
            self = .puback(packetID: id)
        case 9:
            try requireFlags(0, "SUBACK")
            guard body.readableBytes >= 3, let id = body.readInteger(as: UInt16.self),
                  let codes = body.readBytes(length: body.readableBytes),
                  codes.allSatisfy({ $0 <= 2 || $0 == 0x80 })
            else { throw malformed("SUBACK") }
            self = .suback(packetID: id, returnCodes: codes)
        case 11:
            try requireFlags(0, "UNSUBACK")
            guard body.readableBytes == 2, let id = body.readInteger(as: UInt16.self) else {
                throw malformed("UNSUBACK")
            }
            self = .unsuback(packetID: id)
        case 13:
            try requireFlags(0, "PINGRESP")
            guard body.readableBytes == 0 else { throw malformed("PINGRESP") }
            self = .pingresp
        default:
            throw .unexpectedType(type)
        }
    }
}

/// Why bytes from the broker are not a packet the subscriber reads: the stream cannot be read on, and the
/// connection fails with it, as ``MQTTSubscriberError/protocolError(_:)`` and this description. (A PUBLISH that
/// cannot be read but whose length is sound is no error: it is delivered refused, ``MQTTRefusal``.)
package enum MQTTDecodingError: Error, Equatable, CustomStringConvertible {
    /// The Remaining Length's fourth byte has its continuation bit set (MQTT 3.1.1 section 2.2.3 allows four).
    case remainingLengthTooLong
    /// A Remaining Length above the decoder's maximum.
    case packetTooLarge(remainingLength: Int, maximum: Int)
    /// Fixed header flags other than those the packet type requires (section 2.2.2).
    case reservedFlags(packet: String, flags: UInt8)
    /// A body too short, too long, or with a value the packet cannot hold; the string names the packet and part.
    case malformed(String)
    /// A packet type a broker does not send to a client (CONNECT, SUBSCRIBE, …, or the reserved 0 and 15).
    case unexpectedType(UInt8)

    package var description: String {
        switch self {
        case .remainingLengthTooLong: "a Remaining Length longer than 4 bytes"
        case .packetTooLarge(let length, let maximum): "a packet of \(length) bytes, more than the \(maximum) accepted"
        case .reservedFlags(let packet, let flags): "\(packet) with fixed header flags \(flags)"
        case .malformed(let what): "a malformed \(what)"
        case .unexpectedType(let type): "a packet of type \(type), which a broker does not send to a subscriber"
        }
    }
}

/// The packets the subscriber sends.
enum MQTTEncoder {
    static func connect(clientID: String, cleanSession: Bool, username: String?, password: String?,
                        keepAlive: UInt16, allocator: ByteBufferAllocator) throws(MQTTSubscriberError) -> ByteBuffer {
        guard password == nil || username != nil else {
            throw .invalidArgument("a password without a user name (MQTT 3.1.1 section 3.1.2.9)")
        }
        var body = allocator.buffer(capacity: 64)
        try writeString("MQTT", to: &body, what: "protocol name")
        body.writeInteger(UInt8(4))  // protocol level: 3.1.1
        var flags: UInt8 = cleanSession ? 0x02 : 0
        if username != nil { flags |= 0x80 }
        if password != nil { flags |= 0x40 }
        body.writeInteger(flags)
        body.writeInteger(keepAlive)
        try writeString(clientID, to: &body, what: "client id")
        if let username { try writeString(username, to: &body, what: "user name") }
        if let password { try writeString(password, to: &body, what: "password") }
        return packet(0x10, body: body, allocator: allocator)
    }

    static func subscribe(packetID: UInt16, topicFilter: String, qos: UInt8,
                          allocator: ByteBufferAllocator) throws(MQTTSubscriberError) -> ByteBuffer {
        guard !topicFilter.isEmpty else { throw .invalidArgument("an empty topic filter") }
        guard qos <= 2 else { throw .invalidArgument("QoS \(qos) (0, 1 or 2)") }
        var body = allocator.buffer(capacity: topicFilter.utf8.count + 5)
        body.writeInteger(packetID)
        try writeString(topicFilter, to: &body, what: "topic filter")
        body.writeInteger(qos)
        return packet(0x82, body: body, allocator: allocator)
    }

    /// PUBACKs for `packetIDs`, one after the other in one buffer.
    static func pubacks(_ packetIDs: [UInt16], allocator: ByteBufferAllocator) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: 4 * packetIDs.count)
        for id in packetIDs {
            buffer.writeInteger(UInt8(0x40))
            buffer.writeInteger(UInt8(2))
            buffer.writeInteger(id)
        }
        return buffer
    }

    static func pingreq(allocator: ByteBufferAllocator) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: 2)
        buffer.writeBytes([0xC0, 0x00])
        return buffer
    }

    static func disconnect(allocator: ByteBufferAllocator) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: 2)
        buffer.writeBytes([0xE0, 0x00])
        return buffer
    }

    private static func writeString(_ string: String, to buffer: inout ByteBuffer,
                                    what: String) throws(MQTTSubscriberError) {
        let count = string.utf8.count
        guard count <= Int(UInt16.max) else { throw .invalidArgument("a \(what) of \(count) bytes (65535 at most)") }
        buffer.writeInteger(UInt16(count))
        buffer.writeString(string)
    }

    private static func packet(_ header: UInt8, body: ByteBuffer, allocator: ByteBufferAllocator) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: body.readableBytes + 5)
        buffer.writeInteger(header)
        var length = body.readableBytes
        repeat {
            var byte = UInt8(length & 0x7F)
            length >>= 7
            if length > 0 { byte |= 0x80 }
            buffer.writeInteger(byte)
        } while length > 0
        var body = body
        buffer.writeBuffer(&body)
        return buffer
    }
}

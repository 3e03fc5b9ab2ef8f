import NIOCore

/// What the start of a PUBLISH's body says (MQTT 3.1.1 section 3.3.2): its topic and packet id, enough to
/// acknowledge and count a message without reading its payload, and why the message cannot be read, if it cannot.
struct MQTTPublishHead: Equatable {
    /// The fixed header's flags: DUP, QoS, RETAIN.
    var flags: UInt8
    /// The topic; empty when it could not be read.
    var topic = ""
    /// The packet id, read at QoS 1 only (the one QoS whose PUBACK this subscriber sends), and never 0.
    var packetID: UInt16?
    /// Why the body is not a PUBLISH the subscriber reads: the part named as ``MQTTRefusal/malformed(_:)`` names it.
    var malformation: String?
    /// The body's bytes the head spans; the payload follows. A malformed head spans the whole body.
    var count = 0

    var qos: UInt8 { (flags >> 1) & 3 }

    /// Reads the head from `body`, the first bytes (or all) of a body of `remainingLength` bytes; nil when more of
    /// the body must come before the head can be read. The head spans 65,539 bytes at most.
    init?(flags: UInt8, body: ByteBuffer, remainingLength: Int) {
        self.flags = flags
        let available = min(body.readableBytes, remainingLength)
        let start = body.readerIndex
        // The first `end` bytes of the body: present, yet to come (nil), or beyond the body (malformed).
        enum Reach { case present, pending, beyond }
        func reach(_ end: Int) -> Reach { end > remainingLength ? .beyond : end > available ? .pending : .present }

        switch reach(2) {
        case .beyond: self.malformed("PUBLISH (topic)", remainingLength); return
        case .pending: return nil
        case .present: break
        }
        let topicEnd = 2 + Int(body.getInteger(at: start, as: UInt16.self)!)
        switch reach(topicEnd) {
        case .beyond: self.malformed("PUBLISH (topic)", remainingLength); return
        case .pending: return nil
        case .present: break
        }
        topic = String(validating: body.getBytes(at: start + 2, length: topicEnd - 2)!, as: UTF8.self) ?? ""
        count = topicEnd
        switch qos {
        case 1:
            switch reach(topicEnd + 2) {
            case .beyond: self.malformed("PUBLISH (packet id)", remainingLength); return
            case .pending: return nil
            case .present: break
            }
            let id = body.getInteger(at: start + topicEnd, as: UInt16.self)!
            count = topicEnd + 2
            guard id != 0 else { self.malformed("PUBLISH (packet id)", remainingLength); return }
            packetID = id
        case 2: malformed("PUBLISH at QoS 2 (only QoS 0 and 1 are supported)", remainingLength); return
        case 3: malformed("PUBLISH (QoS 3)", remainingLength); return
        default: break
        }
        if topic.isEmpty { malformed("PUBLISH (topic not UTF-8 or empty)", remainingLength) }
    }

    /// Marks the head malformed: the message is refused, and its whole body dropped.
    private mutating func malformed(_ what: String, _ remainingLength: Int) {
        malformation = what
        count = remainingLength
    }

    /// The message unread, for `refusal`.
    func refused(_ refusal: MQTTRefusal) -> MQTTMessage {
        MQTTMessage(topic: topic, payload: [], packetID: packetID, qos: qos, isDuplicate: flags & 0x08 != 0,
                    isRetained: flags & 0x01 != 0, refusal: refusal)
    }
}

extension MQTTMessage {
    /// Reads a whole PUBLISH from its fixed header `flags` and its `body` (exactly Remaining Length bytes). A body
    /// that is not a PUBLISH the subscriber reads makes a message refused as malformed, not an error: its length is
    /// sound, so the stream reads on.
    init(publishFlags flags: UInt8, body: inout ByteBuffer) {
        let head = MQTTPublishHead(flags: flags, body: body, remainingLength: body.readableBytes)!
        if let malformation = head.malformation {
            self = head.refused(.malformed(malformation))
            return
        }
        body.moveReaderIndex(forwardBy: head.count)
        self.init(topic: head.topic, payload: body.readBytes(length: body.readableBytes) ?? [], packetID: head.packetID,
                  qos: head.qos, isDuplicate: flags & 0x08 != 0, isRetained: flags & 0x01 != 0)
    }
}

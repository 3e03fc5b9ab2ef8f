/// A message the broker delivered: one PUBLISH packet.
///
/// A PUBLISH the subscriber does not read (too large, or malformed with sound framing) is delivered too, in its
/// place in the stream, with its ``refusal`` and an empty payload: so that it is acknowledged in order with the
/// others and counted, and the connection goes on. Otherwise the broker would send it again at every reconnection
/// (MQTT 3.1.1 section 2.2.3; MQTT 5's Maximum Packet Size, section 3.1.2.11, is the same idea).
public struct MQTTMessage: Sendable, Equatable {
    /// The topic it was published to (never a wildcard); empty when a refused message's topic could not be read.
    public let topic: String
    /// Its payload, as sent; empty when refused.
    public let payload: [UInt8]
    /// Its packet id, to ``MQTTSubscriber/acknowledge(_:)``; nil at QoS 0, and when a refused message's could not be
    /// read.
    public let packetID: UInt16?
    /// The QoS it was delivered at: 0 or 1 (a refused message: as its fixed header says, up to 3).
    public let qos: UInt8
    /// Whether the broker sent it before (the DUP flag): a message not acknowledged before a reconnect.
    public let isDuplicate: Bool
    /// Whether it is the topic's retained message, sent because of a new subscription.
    public let isRetained: Bool
    /// Why it was not read; nil for a message read whole.
    public let refusal: MQTTRefusal?

    /// A message as a PUBLISH packet carries it.
    ///
    /// ```swift
    /// let message = MQTTMessage(topic: "fleet/r1/fix", payload: Array("{}".utf8), packetID: 7, qos: 1,
    ///                           isDuplicate: false, isRetained: false)
    /// ```
    public init(topic: String, payload: [UInt8], packetID: UInt16?, qos: UInt8, isDuplicate: Bool, isRetained: Bool,
                refusal: MQTTRefusal? = nil) {
        self.topic = topic
        self.payload = payload
        self.packetID = packetID
        self.qos = qos
        self.isDuplicate = isDuplicate
        self.isRetained = isRetained
        self.refusal = refusal
    }
}

/// Why ``MQTTSubscriber`` delivered a PUBLISH unread (``MQTTMessage/refusal``).
public enum MQTTRefusal: Sendable, Equatable, CustomStringConvertible {
    /// Its Remaining Length is above what the subscriber reads (1 MiB of payload with the longest topic): its topic
    /// and packet id were read, the rest skipped as it came, never buffered.
    case tooLarge(remainingLength: Int)
    /// Its length is sound but its body is not a PUBLISH the subscriber reads (QoS 2 or 3, a topic that is empty,
    /// not UTF-8 or longer than the packet, packet id 0); the string names the part.
    case malformed(String)

    public var description: String {
        switch self {
        case .tooLarge(let length): "a PUBLISH of \(length) bytes, more than the subscriber reads (skipped unread)"
        case .malformed(let what): "a malformed \(what)"
        }
    }
}

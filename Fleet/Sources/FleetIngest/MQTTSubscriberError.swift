import NIOCore
import NIOSSL

/// Why ``MQTTSubscriber`` could not connect, subscribe, or go on.
public enum MQTTSubscriberError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The broker refused the connection with this CONNACK return code (1 to 5, MQTT 3.1.1 section 3.2.2.3).
    case refused(returnCode: UInt8)
    /// The broker refused a subscription (SUBACK return code 0x80).
    case subscriptionRefused(topicFilter: String)
    /// The connection ended.
    case connectionClosed
    /// The broker sent what MQTT 3.1.1 does not allow (or what this subscriber does not support: QoS 2).
    case protocolError(String)
    /// The broker did not answer in time (CONNACK, SUBACK, PINGRESP).
    case timedOut(String)
    /// The connection could not be made or failed (refused, reset, TLS).
    case io(String)
    /// An argument MQTT cannot carry (a string longer than 65535 bytes, a password without a user name).
    case invalidArgument(String)

    public var description: String {
        switch self {
        case .refused(let code):
            let reason = switch code {
            case 1: "unacceptable protocol version"
            case 2: "identifier rejected"
            case 3: "server unavailable"
            case 4: "bad user name or password"
            case 5: "not authorized"
            default: "reserved return code"
            }
            return "the broker refused the connection: \(reason) (CONNACK return code \(code))"
        case .subscriptionRefused(let filter): return "the broker refused the subscription to \(filter)"
        case .connectionClosed: return "the connection to the broker closed"
        case .protocolError(let what): return "the broker sent \(what)"
        case .timedOut(let what): return "timed out waiting for \(what)"
        case .io(let what): return "connection failed: \(what)"
        case .invalidArgument(let what): return "MQTT cannot carry \(what)"
        }
    }

    /// `error` as a reason the connection failed.
    static func from(_ error: any Error) -> MQTTSubscriberError {
        if let error = error as? MQTTSubscriberError { return error }
        if let error = error as? MQTTDecodingError { return .protocolError(error.description) }
        if let error = error as? ChannelError, error == .ioOnClosedChannel || error == .alreadyClosed {
            return .connectionClosed
        }
        if error is ByteToMessageDecoderError { return .connectionClosed }  // ended in the middle of a packet
        if error is NIOSSLError || error is BoringSSLError { return .io("TLS: \(error)") }
        return .io(String(describing: error))
    }
}

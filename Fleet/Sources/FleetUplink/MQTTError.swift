import CMosquitto

/// A libmosquitto call that failed: its error code (`MOSQ_ERR_*`) and what failed, in words.
///
/// ```swift
/// do {
///     try connection.loopRead()
/// } catch {
///     print(error)   // "reading from the broker: The connection was lost. (mosquitto error 7)"
/// }
/// ```
public struct MQTTError: Error, Sendable, Equatable, CustomStringConvertible {
    /// libmosquitto's error code (`MOSQ_ERR_*`), e.g. ``MQTTError/connectionLost``.
    public let code: Int32
    /// What failed and why: the operation, then `mosquitto_strerror`'s text.
    public let message: String

    /// An error with `code` and `message` as given.
    public init(code: Int32, message: String) {
        self.code = code
        self.message = message
    }

    /// `operation` failed with `code`; the message adds libmosquitto's text for the code (read at once, because
    /// for `MOSQ_ERR_ERRNO` it is `errno`'s).
    init(code: Int32, operation: String) {
        self.code = code
        self.message = "\(operation): \(String(cString: mosquitto_strerror(code)))"
    }

    public var description: String { "\(message) (mosquitto error \(code))" }

    /// `MOSQ_ERR_INVAL`: an argument libmosquitto refused (an empty topic, a QoS above 2, …).
    public static let invalidArgument = cmosq_err_inval()
    /// `MOSQ_ERR_NO_CONN`: there is no connection (yet, or any more).
    public static let noConnection = cmosq_err_no_conn()
    /// `MOSQ_ERR_CONN_REFUSED`: the broker answered CONNECT with a refusal (see ``MQTTConnectResult``).
    public static let connectionRefused = cmosq_err_conn_refused()
    /// `MOSQ_ERR_CONN_LOST`: the connection ended without a DISCONNECT.
    public static let connectionLost = cmosq_err_conn_lost()
    /// `MOSQ_ERR_TLS`: the TLS handshake failed (an unknown CA, a certificate for another host, …).
    public static let tls = cmosq_err_tls()
    /// `MOSQ_ERR_KEEPALIVE`: the broker did not answer a PINGREQ within the keepalive.
    public static let keepalive = cmosq_err_keepalive()
    /// `MOSQ_ERR_ERRNO`: a system call failed; the message has `strerror(errno)`.
    public static let systemError = cmosq_err_errno()
    /// `MOSQ_ERR_PAYLOAD_SIZE`: a payload larger than MQTT allows.
    public static let payloadSize = cmosq_err_payload_size()
}

/// The broker's answer to CONNECT (its CONNACK).
public enum MQTTConnectResult: Sendable, Equatable {
    /// Connected: publishing is acknowledged from now on.
    case accepted
    /// Refused with MQTT 3.1.1's return `code` (4: bad user name or password, 5: not authorised) and
    /// `mosquitto_connack_string`'s text for it.
    case refused(code: Int32, reason: String)
}

/// A message a subscription received (see ``MQTTConnection/subscribe(topic:qos:)``).
public struct MQTTMessage: Sendable, Equatable {
    /// The topic it was published on.
    public let topic: String
    /// Its payload.
    public let payload: [UInt8]
    /// The QoS it arrived with.
    public let qos: Int32
    /// Whether the broker sent it as the topic's retained message (to a new subscription).
    public let retain: Bool
}

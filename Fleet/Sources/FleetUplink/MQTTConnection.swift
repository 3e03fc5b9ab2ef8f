import CMosquitto

#if canImport(Glibc)
import Glibc
#endif

/// The library's process-wide state, set up once (`mosquitto_lib_init`) and never torn down.
private let libraryInitialisation: Int32 = mosquitto_lib_init()

/// One MQTT 3.1.1 connection through libmosquitto, driven by its owner's event loop.
///
/// Everything happens on the one thread that drives it: the owner polls ``socket`` (for reading, and for writing
/// while ``wantsWrite``), then calls ``loopRead()``, ``loopWrite()`` and, at least once a second, ``loopMisc()``.
/// The callbacks (``onConnect``, ``onDisconnect``, ``onPublish``, ``onSubscribe``, ``onMessage``) run synchronously
/// inside those calls, or inside ``publish(topic:payload:qos:retain:)`` and ``disconnect()``. It never reconnects:
/// make a new connection for every attempt.
///
/// ```swift
/// let connection = try MQTTConnection(clientID: "fleet-uplink-van-7")
/// try connection.setCredentials(username: "van-7", password: password)
/// try connection.setWill(topic: "fleet/van-7/status", payload: Array("offline".utf8), qos: 1, retain: true)
/// try connection.setMaxInflight(100)
/// connection.onConnect = { result in if result == .accepted { /* publish */ } }
/// connection.onPublish = { messageID in /* the broker has it: remove it from the queue */ }
/// try connection.connect(host: "127.0.0.1", port: 1883, keepAlive: 30)
/// while running {
///     var fd = pollfd(fd: connection.socket, events: Int16(POLLIN), revents: 0)
///     if connection.wantsWrite { fd.events |= Int16(POLLOUT) }
///     _ = poll(&fd, 1, 1000)
///     if fd.revents & Int16(POLLIN | POLLERR | POLLHUP) != 0 { try connection.loopRead() }
///     if fd.revents & Int16(POLLOUT) != 0 { try connection.loopWrite() }
///     try connection.loopMisc()
/// }
/// ```
///
/// A thrown error from a loop call means the connection is over (``socket`` is then -1). libmosquitto calls
/// ``onDisconnect`` for a connection that ends after the TCP connection was made, but not for a failed TLS
/// handshake, which only throws ``MQTTError/tls``. Dropping the connection without ``disconnect()`` closes the socket
/// without DISCONNECT: the broker then publishes the will.
public final class MQTTConnection {
    private let handle: OpaquePointer

    /// Called with the broker's CONNACK. A refusal is followed by ``onDisconnect`` and an error from ``loopRead()``.
    public var onConnect: ((MQTTConnectResult) -> Void)?
    /// Called when the connection ends: 0 after ``disconnect()``, otherwise libmosquitto's error code
    /// (e.g. ``MQTTError/connectionLost``).
    public var onDisconnect: ((Int32) -> Void)?
    /// Called with the message id of a QoS 1 message once its PUBACK arrived (QoS 0: once it was written).
    public var onPublish: ((Int32) -> Void)?
    /// Called with a subscription's message id and the QoS granted for each of its topics (128: refused).
    public var onSubscribe: ((_ messageID: Int32, _ grantedQoS: [Int32]) -> Void)?
    /// Called for each message a subscription receives (a QoS 1 message is acknowledged by libmosquitto).
    public var onMessage: ((MQTTMessage) -> Void)?

    /// A connection that is not connected yet, with a clean session by default, speaking MQTT 3.1.1.
    ///
    /// - Parameters:
    ///   - clientID: The client identifier the broker knows it by (at most 23 bytes for every 3.1.1 broker).
    ///   - cleanSession: Whether the broker forgets the session when it ends.
    public init(clientID: String, cleanSession: Bool = true) throws(MQTTError) {
        guard libraryInitialisation == cmosq_err_success() else {
            throw MQTTError(code: libraryInitialisation, operation: "mosquitto_lib_init")
        }
        guard let handle = mosquitto_new(clientID, cleanSession, nil) else {
            let code = errno == EINVAL ? cmosq_err_inval() : cmosq_err_nomem()
            throw MQTTError(code: code, operation: "creating the MQTT client \(clientID)")
        }
        self.handle = handle
        // Unretained: the callbacks only run inside this object's own calls, which keep it alive.
        mosquitto_user_data_set(handle, Unmanaged.passUnretained(self).toOpaque())
        try check(cmosq_use_mqtt_311(handle), "choosing MQTT 3.1.1")
        mosquitto_connect_callback_set(handle) { _, userdata, code in
            MQTTConnection.from(userdata).didConnect(code)
        }
        mosquitto_disconnect_callback_set(handle) { _, userdata, code in
            MQTTConnection.from(userdata).onDisconnect?(code)
        }
        mosquitto_publish_callback_set(handle) { _, userdata, messageID in
            MQTTConnection.from(userdata).onPublish?(messageID)
        }
        mosquitto_subscribe_callback_set(handle) { _, userdata, messageID, count, granted in
            let connection = MQTTConnection.from(userdata)
            guard let onSubscribe = connection.onSubscribe else { return }
            let qos = granted.map { Array(UnsafeBufferPointer(start: $0, count: Int(count))) } ?? []
            onSubscribe(messageID, qos)
        }
        mosquitto_message_callback_set(handle) { _, userdata, message in
            let connection = MQTTConnection.from(userdata)
            guard let onMessage = connection.onMessage, let message else { return }
            let payload = message.pointee.payload.map {
                Array(UnsafeRawBufferPointer(start: $0, count: Int(message.pointee.payloadlen)))
            } ?? []
            onMessage(MQTTMessage(topic: String(cString: message.pointee.topic), payload: payload,
                                  qos: message.pointee.qos, retain: message.pointee.retain))
        }
    }

    deinit {
        mosquitto_destroy(handle)
    }

    private static func from(_ userdata: UnsafeMutableRawPointer?) -> MQTTConnection {
        Unmanaged<MQTTConnection>.fromOpaque(userdata!).takeUnretainedValue()
    }

    private func didConnect(_ code: Int32) {
        guard let onConnect else { return }
        if code == 0 {
            onConnect(.accepted)
        } else {
            onConnect(.refused(code: code, reason: String(cString: mosquitto_connack_string(code))))
        }
    }

    private func check(_ code: Int32, _ operation: @autoclosure () -> String) throws(MQTTError) {
        guard code == cmosq_err_success() else { throw MQTTError(code: code, operation: operation()) }
    }

    /// Runs a libmosquitto call that may run callbacks, keeping this object alive until it returns even when a
    /// callback lets go of the last reference to it.
    private func whileAlive(_ body: () -> Int32) -> Int32 {
        let retained = Unmanaged.passRetained(self)
        defer { retained.release() }
        return body()
    }

    // MARK: - Before connecting

    /// The user name and password sent in CONNECT.
    ///
    /// ```swift
    /// try connection.setCredentials(username: "van-7", password: try String(contentsOfFile: passwordFile))
    /// ```
    public func setCredentials(username: String, password: String?) throws(MQTTError) {
        try check(mosquitto_username_pw_set(handle, username, password), "setting the user name \(username)")
    }

    /// Connects over TLS, trusting only the CAs in `caFile` (PEM) and checking that the server's certificate names
    /// the host given to ``connect(host:port:keepAlive:)`` (a DNS name or an IP address in its subjectAltName).
    ///
    /// ```swift
    /// try connection.setTLS(caFile: "/etc/fleet/ca.pem")
    /// ```
    public func setTLS(caFile: String) throws(MQTTError) {
        try check(mosquitto_tls_set(handle, caFile, nil, nil, nil, nil), "using TLS with the CA file \(caFile)")
        try check(mosquitto_tls_insecure_set(handle, false), "checking the broker's host name")
    }

    /// The message the broker publishes for this client when the connection ends without DISCONNECT.
    ///
    /// ```swift
    /// try connection.setWill(topic: "fleet/van-7/status", payload: Array("offline".utf8), qos: 1, retain: true)
    /// ```
    public func setWill(topic: String, payload: [UInt8], qos: Int32, retain: Bool) throws(MQTTError) {
        guard payload.count <= Int(Int32.max) else {
            throw MQTTError(code: MQTTError.payloadSize, operation: "setting the will on \(topic)")
        }
        let code = payload.withUnsafeBytes {
            mosquitto_will_set(handle, topic, Int32($0.count), $0.baseAddress, qos, retain)
        }
        try check(code, "setting the will on \(topic)")
    }

    /// How many QoS 1 messages are sent before their PUBACKs (1 to 65535; libmosquitto's default is 20). Beyond it,
    /// ``publish(topic:payload:qos:retain:)`` still succeeds: libmosquitto keeps the message and sends it when a
    /// PUBACK frees a place.
    ///
    /// ```swift
    /// try connection.setMaxInflight(100)
    /// ```
    public func setMaxInflight(_ count: Int) throws(MQTTError) {
        guard (1...65535).contains(count) else {
            throw MQTTError(code: MQTTError.invalidArgument, message: "setting the messages in flight to \(count): not within 1...65535")
        }
        try check(cmosq_set_send_maximum(handle, Int32(count)), "setting the messages in flight to \(count)")
    }

    // MARK: - The connection

    /// Connects to `host`:`port` (blocking until the TCP connection is made; a TLS handshake goes on in the loop)
    /// and queues CONNECT. The broker's answer comes later through ``onConnect``.
    ///
    /// ```swift
    /// try connection.connect(host: "127.0.0.1", port: 1883, keepAlive: 30)
    /// ```
    ///
    /// - Parameter keepAlive: Seconds; ``loopMisc()`` sends PINGREQ when nothing else went out for this long.
    public func connect(host: String, port: UInt16, keepAlive: Int32) throws(MQTTError) {
        let code = whileAlive { mosquitto_connect(handle, host, Int32(port), keepAlive) }
        try check(code, "connecting to \(host):\(port)")
    }

    /// Starts connecting to `host`:`port` without waiting for the TCP connection (`mosquitto_connect_async`) and
    /// queues CONNECT: poll ``socket`` for writing (``wantsWrite``), and the loop calls finish the connection (and a
    /// TLS handshake). A connection that fails is told by a loop call's error. Only the name's lookup waits, within
    /// the resolver's own timeout; a numeric address does not.
    ///
    /// ```swift
    /// try connection.connectAsync(host: "127.0.0.1", port: 1883, keepAlive: 30)
    /// ```
    public func connectAsync(host: String, port: UInt16, keepAlive: Int32) throws(MQTTError) {
        let code = whileAlive { mosquitto_connect_async(handle, host, Int32(port), keepAlive) }
        try check(code, "connecting to \(host):\(port)")
    }

    /// The connection's socket, to poll; -1 when not connected.
    public var socket: Int32 { mosquitto_socket(handle) }

    /// Whether libmosquitto has something to write: poll ``socket`` for POLLOUT too, then call ``loopWrite()``.
    public var wantsWrite: Bool { mosquitto_want_write(handle) }

    /// Reads what the broker sent (call when ``socket`` is readable); runs the callbacks for it.
    public func loopRead() throws(MQTTError) {
        try check(whileAlive { mosquitto_loop_read(handle, 1) }, "reading from the broker")
    }

    /// Writes what is queued (call when ``socket`` is writable and ``wantsWrite``).
    public func loopWrite() throws(MQTTError) {
        try check(whileAlive { mosquitto_loop_write(handle, 1) }, "writing to the broker")
    }

    /// The keepalive: sends PINGREQ when due, and ends the connection when the broker did not answer the last one.
    /// Call it at least once a second.
    public func loopMisc() throws(MQTTError) {
        try check(whileAlive { mosquitto_loop_misc(handle) }, "keeping the connection alive")
    }

    /// Publishes `payload` on `topic`; returns its message id, which ``onPublish`` reports once the broker
    /// acknowledged it (QoS 1).
    ///
    /// libmosquitto copies the message and writes at once what the socket takes (from inside a callback: at the next
    /// ``loopWrite()``). Beyond ``setMaxInflight(_:)`` QoS 1 messages waiting for PUBACK, it keeps the message and
    /// sends it later. Before CONNACK, the message waits behind CONNECT. Without a connection (before
    /// ``connect(host:port:keepAlive:)``, after the connection ended) it throws ``MQTTError/noConnection`` and sends
    /// nothing. After any other error, the connection is not to be used any more.
    ///
    /// ```swift
    /// let id = try connection.publish(topic: "fleet/van-7/fix", payload: fix.payload(), qos: 1, retain: false)
    /// ```
    @discardableResult
    public func publish(topic: String, payload: [UInt8], qos: Int32, retain: Bool) throws(MQTTError) -> Int32 {
        guard payload.count <= Int(Int32.max) else {
            throw MQTTError(code: MQTTError.payloadSize, operation: "publishing on \(topic)")
        }
        // libmosquitto 2.0.11 answers MOSQ_ERR_NO_CONN without a socket but keeps a QoS 1 message all the same, and
        // sends it after a later connect: refused here, so that an error means "not sent".
        guard mosquitto_socket(handle) >= 0 else {
            throw MQTTError(code: MQTTError.noConnection, operation: "publishing on \(topic)")
        }
        var messageID: Int32 = 0
        let code = whileAlive {
            payload.withUnsafeBytes {
                mosquitto_publish(handle, &messageID, topic, Int32($0.count), $0.baseAddress, qos, retain)
            }
        }
        try check(code, "publishing on \(topic)")
        return messageID
    }

    /// Subscribes to `topic` (a filter, with `+` and `#`); returns the message id that ``onSubscribe`` reports
    /// with the SUBACK. Messages arrive through ``onMessage``.
    ///
    /// ```swift
    /// connection.onMessage = { message in print(message.topic) }
    /// try connection.subscribe(topic: "fleet/+/state", qos: 1)
    /// ```
    @discardableResult
    public func subscribe(topic: String, qos: Int32) throws(MQTTError) -> Int32 {
        var messageID: Int32 = 0
        let code = whileAlive { mosquitto_subscribe(handle, &messageID, topic, qos) }
        try check(code, "subscribing to \(topic)")
        return messageID
    }

    /// Ends the connection cleanly: DISCONNECT, so the broker does not publish the will. ``onDisconnect`` gets 0
    /// once DISCONNECT is written: at once, or from ``loopWrite()`` when the socket is full or this is called from a
    /// callback. Does nothing when not connected.
    ///
    /// ```swift
    /// connection.disconnect()
    /// ```
    public func disconnect() {
        // MOSQ_ERR_NO_CONN (not connected) is the only failure: there is nothing to end then.
        _ = whileAlive { mosquitto_disconnect(handle) }
    }
}

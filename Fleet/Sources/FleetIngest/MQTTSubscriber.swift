public import NIOCore
public import NIOPosix
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

/// An MQTT 3.1.1 subscriber that acknowledges each QoS 1 message only when told to, so that a message is
/// acknowledged after what it carries is stored, not when it arrives. With a persistent session
/// (`cleanSession: false` and the same client id), the broker keeps the subscriptions and every message not
/// acknowledged while the subscriber is away or killed, and sends them again (``MQTTMessage/isDuplicate``) on the
/// next connection.
///
/// ```swift
/// let subscriber = try await MQTTSubscriber.connect(host: "127.0.0.1", port: 1883, clientID: "fleet-ingest")
/// if !subscriber.sessionPresent { _ = try await subscriber.subscribe("fleet/+/fix", qos: 1) }
/// for try await message in subscriber.messages {
///     try await store(message.payload)           // committed…
///     if let id = message.packetID { subscriber.acknowledge([id]) }  // …then acknowledged
/// }
/// ```
public final class MQTTSubscriber: Sendable {
    /// Whether the broker had a session for this client id (CONNACK's Session Present): its subscriptions and the
    /// messages queued while it was away.
    public let sessionPresent: Bool
    private let channel: any Channel
    private let stream: AsyncThrowingStream<MQTTMessage, any Error>
    private let responseTimeout: TimeAmount

    private init(channel: any Channel, stream: AsyncThrowingStream<MQTTMessage, any Error>, sessionPresent: Bool,
                 responseTimeout: TimeAmount) {
        self.channel = channel
        self.stream = stream
        self.sessionPresent = sessionPresent
        self.responseTimeout = responseTimeout
    }

    /// Connects (TCP, TLS when `caFile` is given, verifying the server's certificate against it and its name or
    /// IP address against `host`), sends CONNECT (MQTT 3.1.1) and waits for CONNACK.
    ///
    /// ```swift
    /// let subscriber = try await MQTTSubscriber.connect(host: "broker.example", port: 8883, clientID: "ingest",
    ///                                                  username: "ingest", password: secret, caFile: "/etc/ca.pem")
    /// ```
    ///
    /// - Parameters:
    ///   - clientID: The session's name at the broker; keep it from one run to the next for a persistent session.
    ///   - cleanSession: true: the broker forgets the session (subscriptions, queued messages) on disconnect.
    ///   - caFile: PEM certificates to trust; nil: plain TCP.
    ///   - keepAlive: Seconds; a PINGREQ goes every half of it, and the connection fails (``MQTTSubscriberError/timedOut(_:)``)
    ///     when its PINGRESP has not come by the next one. 0: none.
    ///   - responseTimeout: How long to wait for the TCP connection, CONNACK and each SUBACK.
    /// - Throws: ``MQTTSubscriberError/refused(returnCode:)`` with the broker's CONNACK return code (Mosquitto 2
    ///   answers 5, not authorized, to a wrong password), `.io` when no connection could be made.
    public static func connect(host: String, port: UInt16, clientID: String, cleanSession: Bool = false,
                               username: String? = nil, password: String? = nil, caFile: String? = nil,
                               keepAlive: UInt16 = 30, responseTimeout: TimeAmount = .seconds(30),
                               eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton)
        async throws(MQTTSubscriberError) -> MQTTSubscriber {
        let connectPacket = try MQTTEncoder.connect(clientID: clientID, cleanSession: cleanSession, username: username,
                                                    password: password, keepAlive: keepAlive,
                                                    allocator: ByteBufferAllocator())
        var sslContext: NIOSSLContext?
        if let caFile {
            do {
                var configuration = TLSConfiguration.makeClientConfiguration()
                configuration.trustRoots = .file(caFile)
                configuration.certificateVerification = .fullVerification
                sslContext = try NIOSSLContext(configuration: configuration)
            } catch {
                throw .io("TLS with the CA file \(caFile): \(error)")
            }
        }
        // A host name goes in SNI and is checked against the certificate; an IP address is checked against its IP
        // addresses (NIOSSL does that when no server name is given).
        let serverHostname = (try? SocketAddress(ipAddress: host, port: 0)) == nil ? host : nil
        let (stream, continuation) = AsyncThrowingStream<MQTTMessage, any Error>.makeStream()
        // The handler owns the CONNACK promise from the start: the broker's first bytes may come before this task
        // runs again.
        let eventLoop = eventLoopGroup.next()
        let connack = eventLoop.makePromise(of: Bool.self)
        let bootstrap = ClientBootstrap(group: eventLoop)
            .connectTimeout(responseTimeout)
            .channelInitializer { [sslContext] channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    if let sslContext {
                        try pipeline.addHandler(NIOSSLClientHandler(context: sslContext, serverHostname: serverHostname))
                    }
                    try pipeline.addHandler(ByteToMessageHandler(MQTTFrameDecoder()))
                    try pipeline.addHandler(MQTTClientHandler(connect: connectPacket, connack: connack,
                                                              continuation: continuation, keepAlive: keepAlive,
                                                              responseTimeout: responseTimeout))
                }
            }
        let channel: any Channel
        do {
            channel = try await bootstrap.connect(host: host, port: Int(port)).get()
        } catch {
            let reason = MQTTSubscriberError.io("cannot connect to \(host):\(port): \(error)")
            connack.fail(reason)
            continuation.finish(throwing: reason)
            throw reason
        }
        do {
            let sessionPresent = try await connack.futureResult.get()
            return MQTTSubscriber(channel: channel, stream: stream, sessionPresent: sessionPresent,
                                  responseTimeout: responseTimeout)
        } catch {
            _ = try? await channel.close().get()
            throw .from(error)
        }
    }

    /// Subscribes to `topicFilter` (wildcards `+` and `#` allowed) and waits for SUBACK.
    ///
    /// ```swift
    /// let granted = try await subscriber.subscribe("fleet/+/fix", qos: 1)  // 1
    /// ```
    ///
    /// - Returns: The QoS the broker granted (it may be lower than asked).
    /// - Throws: ``MQTTSubscriberError/subscriptionRefused(topicFilter:)`` when the broker answers 0x80.
    @discardableResult
    public func subscribe(_ topicFilter: String, qos: UInt8) async throws(MQTTSubscriberError) -> UInt8 {
        _ = try MQTTEncoder.subscribe(packetID: 1, topicFilter: topicFilter, qos: qos, allocator: channel.allocator)
        do {
            return try await Self.onHandler(of: channel) { $0.subscribe(topicFilter, qos: qos) }.get()
        } catch {
            throw .from(error)
        }
    }

    /// Every PUBLISH the broker sends, in the order it sends them, from the moment of the connection (so also what
    /// a persistent session held before ``subscribe(_:qos:)``). It finishes when the connection ends: normally after
    /// ``disconnect()``, otherwise throwing the reason (``MQTTSubscriberError/connectionClosed`` when the broker went
    /// away, `.protocolError`, `.timedOut`, `.io`). Iterate it once only.
    ///
    /// The stream buffers what is not consumed yet, but that is bounded by the broker, not by this subscriber:
    /// the broker sends at most its in-flight window of QoS 1 messages (Mosquitto's `max_inflight_messages`) before
    /// their PUBACKs come, and holds the rest in the session. So not acknowledging is the backpressure: a slow
    /// consumer that acknowledges only what it stored has at most that many messages waiting here. (QoS 0 messages
    /// have no such bound; subscribe at QoS 1.)
    ///
    /// ```swift
    /// for try await message in subscriber.messages { … }
    /// ```
    public var messages: AsyncThrowingStream<MQTTMessage, any Error> { stream }

    /// Acknowledges QoS 1 messages (PUBACK for each packet id, written in one flush), so that the broker no longer
    /// keeps them for this session. Call it only after each message is safely stored. Packet id 0 is skipped.
    ///
    /// ```swift
    /// subscriber.acknowledge(batch.compactMap(\.packetID))
    /// ```
    public func acknowledge(_ packetIDs: [UInt16]) {
        let ids = packetIDs.filter { $0 != 0 }
        guard !ids.isEmpty else { return }
        channel.writeAndFlush(MQTTEncoder.pubacks(ids, allocator: channel.allocator), promise: nil)
    }

    /// Sends DISCONNECT and closes the connection; ``messages`` then finishes without an error. With a persistent
    /// session the broker keeps the subscriptions and every message not acknowledged.
    ///
    /// ```swift
    /// await subscriber.disconnect()
    /// ```
    public func disconnect() async {
        _ = try? await Self.onHandler(of: channel) { handler -> EventLoopFuture<Void> in
            handler.willDisconnect()
            return handler.eventLoop.makeSucceededVoidFuture()
        }.get()
        _ = try? await channel.writeAndFlush(MQTTEncoder.disconnect(allocator: channel.allocator)).get()
        _ = try? await channel.close().get()
    }

    /// Closes the connection without DISCONNECT, as a crash would; ``messages`` finishes with
    /// ``MQTTSubscriberError/connectionClosed``.
    package func closeWithoutDisconnect() async {
        _ = try? await channel.close().get()
    }

    /// Runs `body` with the channel's handler on its event loop.
    private static func onHandler<T: Sendable>(
        of channel: any Channel, _ body: @escaping @Sendable (MQTTClientHandler) -> EventLoopFuture<T>
    ) -> EventLoopFuture<T> {
        channel.eventLoop.flatSubmit {
            do {
                return body(try channel.pipeline.syncOperations.handler(type: MQTTClientHandler.self))
            } catch {
                return channel.eventLoop.makeFailedFuture(MQTTSubscriberError.connectionClosed)
            }
        }
    }
}

/// The connection's state, on its event loop: the CONNACK and SUBACKs awaited, the keepalive, and the stream of
/// messages.
final class MQTTClientHandler: ChannelInboundHandler {
    typealias InboundIn = MQTTPacket
    typealias OutboundOut = ByteBuffer

    private let continuation: AsyncThrowingStream<MQTTMessage, any Error>.Continuation
    private let keepAlive: UInt16
    private let responseTimeout: TimeAmount
    private let connectPacket: ByteBuffer
    private var context: ChannelHandlerContext?
    private var connack: EventLoopPromise<Bool>?
    private var isConnected = false
    private var subacks: [UInt16: (topicFilter: String, promise: EventLoopPromise<UInt8>, timeout: Scheduled<Void>)] = [:]
    private var lastPacketID: UInt16 = 0
    private var keepAliveTask: RepeatedTask?
    private var connackTimeout: Scheduled<Void>?
    private var isAwaitingPingResponse = false
    private var isDisconnecting = false
    private var failure: MQTTSubscriberError?
    private var isFinished = false

    init(connect: ByteBuffer, connack: EventLoopPromise<Bool>,
         continuation: AsyncThrowingStream<MQTTMessage, any Error>.Continuation, keepAlive: UInt16,
         responseTimeout: TimeAmount) {
        self.connectPacket = connect
        self.connack = connack
        self.eventLoop = connack.futureResult.eventLoop
        self.continuation = continuation
        self.keepAlive = keepAlive
        self.responseTimeout = responseTimeout
    }

    let eventLoop: any EventLoop

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        finish(failure ?? .connectionClosed)
        self.context = nil
    }

    /// Sends CONNECT once the connection is up, and waits for CONNACK for at most the response timeout.
    func channelActive(context: ChannelHandlerContext) {
        let this = NIOLoopBound(self, eventLoop: context.eventLoop)
        connackTimeout = context.eventLoop.scheduleTask(in: responseTimeout) {
            this.value.fail(.timedOut("CONNACK"))
        }
        context.writeAndFlush(wrapOutboundOut(connectPacket), promise: nil)
        context.fireChannelActive()
    }

    /// Sends SUBSCRIBE; the future gives SUBACK's granted QoS.
    func subscribe(_ topicFilter: String, qos: UInt8) -> EventLoopFuture<UInt8> {
        guard let context, isConnected, !isFinished else {
            return eventLoop.makeFailedFuture(MQTTSubscriberError.connectionClosed)
        }
        var id = lastPacketID
        repeat { id = id &+ 1 } while id == 0 || subacks[id] != nil
        lastPacketID = id
        let packet: ByteBuffer
        do {
            packet = try MQTTEncoder.subscribe(packetID: id, topicFilter: topicFilter, qos: qos,
                                               allocator: context.channel.allocator)
        } catch {
            return context.eventLoop.makeFailedFuture(error)
        }
        let promise = context.eventLoop.makePromise(of: UInt8.self)
        let this = NIOLoopBound(self, eventLoop: context.eventLoop)
        let timeout = context.eventLoop.scheduleTask(in: responseTimeout) {
            this.value.fail(.timedOut("SUBACK for \(topicFilter)"))
        }
        subacks[id] = (topicFilter, promise, timeout)
        context.writeAndFlush(wrapOutboundOut(packet), promise: nil)
        return promise.futureResult
    }

    /// The next close is ours, after DISCONNECT: the stream finishes without an error.
    func willDisconnect() {
        isDisconnecting = true
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let packet = unwrapInboundIn(data)
        guard isConnected else {
            guard case .connack(let sessionPresent, let returnCode) = packet, let promise = connack else {
                return fail(.protocolError("\(packet.name) before CONNACK"))
            }
            connack = nil
            connackTimeout?.cancel()
            guard returnCode == 0 else {
                promise.fail(MQTTSubscriberError.refused(returnCode: returnCode))
                return fail(.refused(returnCode: returnCode))
            }
            isConnected = true
            startKeepAlive(context: context)
            promise.succeed(sessionPresent)
            return
        }
        switch packet {
        case .publish(let message):
            continuation.yield(message)
        case .suback(let id, let codes):
            guard let pending = subacks.removeValue(forKey: id) else {
                return fail(.protocolError("a SUBACK for packet id \(id), which was not subscribed"))
            }
            pending.timeout.cancel()
            guard codes.count == 1 else {
                pending.promise.fail(MQTTSubscriberError.protocolError("a SUBACK with \(codes.count) return codes"))
                return fail(.protocolError("a SUBACK with \(codes.count) return codes for one topic filter"))
            }
            if codes[0] == 0x80 {
                pending.promise.fail(MQTTSubscriberError.subscriptionRefused(topicFilter: pending.topicFilter))
            } else {
                pending.promise.succeed(codes[0])
            }
        case .pingresp:
            isAwaitingPingResponse = false
        case .connack, .puback, .unsuback:
            fail(.protocolError("an unexpected \(packet.name)"))
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(.from(error))
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish(failure ?? .connectionClosed)
        context.fireChannelInactive()
    }

    /// Ends the connection for `reason` (the first reason wins).
    private func fail(_ reason: MQTTSubscriberError) {
        if failure == nil { failure = reason }
        finish(failure!)
        context?.close(promise: nil)
    }

    private func finish(_ reason: MQTTSubscriberError) {
        guard !isFinished else { return }
        isFinished = true
        keepAliveTask?.cancel()
        connackTimeout?.cancel()
        connack?.fail(reason)
        connack = nil
        for pending in subacks.values {
            pending.timeout.cancel()
            pending.promise.fail(reason)
        }
        subacks = [:]
        if isDisconnecting && failure == nil {
            continuation.finish()
        } else {
            continuation.finish(throwing: reason)
        }
    }

    /// PINGREQ every half keepalive; a PINGRESP not back by the next one fails the connection.
    private func startKeepAlive(context: ChannelHandlerContext) {
        guard keepAlive > 0 else { return }
        let interval = TimeAmount.milliseconds(Int64(keepAlive) * 500)
        let this = NIOLoopBound(self, eventLoop: context.eventLoop)
        keepAliveTask = context.eventLoop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { _ in
            this.value.keepAliveTick()
        }
    }

    private func keepAliveTick() {
        guard let context, !isFinished else { return }
        if isAwaitingPingResponse {
            return fail(.timedOut("PINGRESP (keepalive \(keepAlive) s)"))
        }
        isAwaitingPingResponse = true
        context.writeAndFlush(wrapOutboundOut(MQTTEncoder.pingreq(allocator: context.channel.allocator)), promise: nil)
    }
}

extension MQTTPacket {
    var name: String {
        switch self {
        case .connack: "CONNACK"
        case .publish: "PUBLISH"
        case .suback: "SUBACK"
        case .unsuback: "UNSUBACK"
        case .puback: "PUBACK"
        case .pingresp: "PINGRESP"
        }
    }
}

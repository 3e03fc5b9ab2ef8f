public import NIOCore
public import NIOPosix
import NIOSSL

/// An MQTT 3.1.1 subscriber that acknowledges each QoS 1 message only when told to, so that a message is
/// acknowledged after what it carries is stored, not when it arrives. With a persistent session
/// (`cleanSession: false` and the same client id), the broker keeps the subscriptions and every message not
/// acknowledged while the subscriber is away or killed, and sends them again (``MQTTMessage/isDuplicate``) on the
/// next connection.
///
/// The connection is a ``NIOAsyncChannel``: its inbound stream carries the messages in batches (``MQTTBatcher``)
/// with backpressure, so that a consumer slower than the broker holds one batch waiting and one gathering, and the
/// rest stays in the socket and at the broker; its outbound writer carries the acknowledgements.
///
/// ```swift
/// let subscriber = try await MQTTSubscriber.connect(host: "127.0.0.1", port: 1883, clientID: "fleet-ingest")
/// if !subscriber.sessionPresent { _ = try await subscriber.subscribe("fleet/+/fix", qos: 1) }
/// try await subscriber.receive { inbound in
///     for try await batch in inbound.batches {
///         try await store(batch)                                     // committed…
///         await inbound.acknowledge(batch.compactMap(\.packetID))    // …then acknowledged
///     }
/// }
/// ```
public final class MQTTSubscriber: Sendable {
    /// Whether the broker had a session for this client id (CONNACK's Session Present): its subscriptions and the
    /// messages queued while it was away.
    public let sessionPresent: Bool
    private let connection: NIOAsyncChannel<[MQTTMessage], ByteBuffer>
    private var channel: any Channel { connection.channel }

    private init(connection: NIOAsyncChannel<[MQTTMessage], ByteBuffer>, sessionPresent: Bool) {
        self.connection = connection
        self.sessionPresent = sessionPresent
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
    ///   - maximumBatchSize: The most messages in one of ``MQTTInbound/batches``.
    /// - Throws: ``MQTTSubscriberError/refused(returnCode:)`` with the broker's CONNACK return code (Mosquitto 2
    ///   answers 5, not authorized, to a wrong password), `.io` when no connection could be made.
    public static func connect(host: String, port: UInt16, clientID: String, cleanSession: Bool = false,
                               username: String? = nil, password: String? = nil, caFile: String? = nil,
                               keepAlive: UInt16 = 30, responseTimeout: TimeAmount = .seconds(30),
                               maximumBatchSize: Int = 1000,
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
        // The handler owns the CONNACK promise from the start: the broker's first bytes may come before this task
        // runs again.
        let eventLoop = eventLoopGroup.next()
        let connack = eventLoop.makePromise(of: Bool.self)
        let connection: NIOAsyncChannel<[MQTTMessage], ByteBuffer>
        do {
            connection = try await ClientBootstrap(group: eventLoop).connectTimeout(responseTimeout)
                .connect(host: host, port: Int(port)) { [sslContext] channel in
                    channel.eventLoop.makeCompletedFuture {
                        let pipeline = channel.pipeline.syncOperations
                        if let sslContext {
                            try pipeline.addHandler(NIOSSLClientHandler(context: sslContext,
                                                                        serverHostname: serverHostname))
                        }
                        try pipeline.addHandler(ByteToMessageHandler(MQTTFrameDecoder()))
                        try pipeline.addHandler(MQTTClientHandler(
                            connect: connectPacket, connack: connack, keepAlive: keepAlive,
                            responseTimeout: responseTimeout))
                        try pipeline.addHandler(MQTTBatcher(maximumCount: maximumBatchSize))
                        return try NIOAsyncChannel(wrappingChannelSynchronously: channel, configuration: .init(
                            backPressureStrategy: MQTTBatcher.backPressure, inboundType: [MQTTMessage].self,
                            outboundType: ByteBuffer.self))
                    }
                }
        } catch {
            let reason = MQTTSubscriberError.io("cannot connect to \(host):\(port): \(error)")
            connack.fail(reason)
            throw reason
        }
        do {
            let sessionPresent = try await connack.futureResult.get()
            return MQTTSubscriber(connection: connection, sessionPresent: sessionPresent)
        } catch {
            _ = try? await connection.channel.close().get()
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

    /// Runs `body` with the connection's messages and its acknowledgements (``MQTTInbound``), then closes the
    /// connection (without DISCONNECT: call ``disconnect()`` in `body` for that). Call it once: the messages can be
    /// read once only.
    ///
    /// ```swift
    /// try await subscriber.receive { inbound in
    ///     for try await message in inbound.messages { … }
    /// }
    /// ```
    ///
    /// - Throws: What `body` throws, such as the reason the messages ended (``MQTTInbound/batches``).
    public func receive(_ body: (MQTTInbound) async throws -> Void) async throws {
        try await connection.executeThenClose { inbound, outbound in
            try await body(MQTTInbound(stream: inbound, writer: outbound))
        }
    }

    /// Sends DISCONNECT and closes the connection; ``MQTTInbound/batches`` then finish without an error. With a
    /// persistent session the broker keeps the subscriptions and every message not acknowledged.
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

    /// Closes the connection without DISCONNECT, as a crash would; ``MQTTInbound/batches`` finish with
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

import NIOCore

/// The connection's protocol state, on its event loop: the CONNACK and SUBACKs awaited and the keepalive. Every
/// PUBLISH goes on up the pipeline as an ``MQTTMessage`` (to ``MQTTBatcher``, then the ``NIOAsyncChannel``'s inbound
/// stream); how the connection ends goes up as an error, once: the ``MQTTSubscriberError`` that failed it, or
/// ``MQTTSubscriberError/connectionClosed`` when it closed without ``willDisconnect()``.
final class MQTTClientHandler: ChannelInboundHandler {
    typealias InboundIn = MQTTPacket
    typealias InboundOut = MQTTMessage
    typealias OutboundOut = ByteBuffer

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

    init(connect: ByteBuffer, connack: EventLoopPromise<Bool>, keepAlive: UInt16, responseTimeout: TimeAmount) {
        self.connectPacket = connect
        self.connack = connack
        self.eventLoop = connack.futureResult.eventLoop
        self.keepAlive = keepAlive
        self.responseTimeout = responseTimeout
    }

    let eventLoop: any EventLoop

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        // Removed with the pipeline, after channelInactive: nothing is left to tell.
        self.context = nil
        finish(failure ?? .connectionClosed)
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

    /// The next close is ours, after DISCONNECT: the inbound stream finishes without an error.
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
            guard !isFinished else { return }
            context.fireChannelRead(wrapInboundOut(message))
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

    /// Whatever failed below (the decoder, TLS, the socket) fails the connection with the reason it gives; what
    /// goes up is that reason, once.
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

    /// Fails what waits for an answer and tells the inbound stream how the connection ended: normally after
    /// DISCONNECT, otherwise with `reason`.
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
        if !(isDisconnecting && failure == nil) { context?.fireErrorCaught(reason) }
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

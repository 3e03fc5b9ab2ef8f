import NIOCore

/// Gathers messages into batches between ``MQTTClientHandler`` and the ``NIOAsyncChannel``: a batch goes up when
/// the stream above asks for one (a `read()` comes down through it), holding every message that came since the last,
/// up to `maximumCount`. So a consumer that writes a batch per statement writes one row per statement while messages
/// trickle in, and as many as have piled up when they pour in, with no timer and no added latency.
///
/// What is held is bounded. The stream above holds one batch at most (its high watermark is 1) and asks for the
/// next when the consumer takes it; until then this handler reads on by itself while it holds fewer than
/// `maximumCount` messages, then stops reading, and the rest waits in the socket and at the broker. It holds at most
/// `maximumCount` messages and those of two reads more.
///
/// ```
/// socket → decoder → MQTTClientHandler → MQTTBatcher → NIOAsyncChannel (inbound: [MQTTMessage], 1 buffered)
///                                        ↑ read(): the consumer took a batch; send the next, read on
/// ```
final class MQTTBatcher: ChannelDuplexHandler {
    typealias InboundIn = MQTTMessage
    typealias InboundOut = [MQTTMessage]
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// The stream's backpressure: one batch waits while the consumer works on another.
    static let backPressure = NIOAsyncSequenceProducerBackPressureStrategies.HighLowWatermark(lowWatermark: 1,
                                                                                            highWatermark: 1)

    let maximumCount: Int
    private var pending: [MQTTMessage] = []
    /// Whether the stream above asked for a batch and has not had one since.
    private var isAsked = false

    init(maximumCount: Int) {
        self.maximumCount = max(maximumCount, 1)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        pending.append(unwrapInboundIn(data))
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if isAsked, !pending.isEmpty { sendBatch(context: context) }
        context.fireChannelReadComplete()
        // Ask the stream above, as the channel's autoRead would (it does not when a read is already pending): it
        // passes the read() down to read(context:) if it wants more, or keeps it until the consumer takes its batch.
        // Meanwhile read on, unasked, while the next batch is not full.
        context.channel.read()
        if !isAsked, pending.count < maximumCount { context.read() }
    }

    /// The stream above wants more: it gets what is held now, or the next message to come.
    func read(context: ChannelHandlerContext) {
        isAsked = true
        if !pending.isEmpty {
            sendBatch(context: context)
            context.fireChannelReadComplete()
            // More than a batch was held: ask the stream again, so that it asks for the rest once the consumer
            // takes this one (no read from the socket may come to ask for it).
            if !pending.isEmpty { context.channel.read() }
        }
        context.read()
    }

    /// Everything held goes up before the error or the end, so that the consumer sees every message that came.
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        sendAll(context: context)
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        sendAll(context: context)
        context.fireChannelInactive()
    }

    private func sendBatch(context: ChannelHandlerContext) {
        isAsked = false
        if pending.count <= maximumCount {
            context.fireChannelRead(wrapInboundOut(pending))
            pending.removeAll(keepingCapacity: true)
        } else {
            context.fireChannelRead(wrapInboundOut(Array(pending.prefix(maximumCount))))
            pending.removeFirst(maximumCount)
        }
    }

    private func sendAll(context: ChannelHandlerContext) {
        guard !pending.isEmpty else { return }
        while !pending.isEmpty { sendBatch(context: context) }
        context.fireChannelReadComplete()
    }
}

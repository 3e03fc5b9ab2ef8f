import NIOCore

/// One connection's messages and its acknowledgements: what ``MQTTSubscriber/receive(_:)`` gives its body.
///
/// The messages can be read once, as ``batches`` or as ``messages``. They come with backpressure: while the consumer
/// works on one batch, one more waits and one gathers, and the connection stops reading from the socket once that
/// is full, so that the rest waits at the broker. A QoS 1 message not acknowledged is sent again on the next
/// connection (marked ``MQTTMessage/isDuplicate``): acknowledge each batch once what it carries is stored.
public struct MQTTInbound: Sendable {
    let stream: NIOAsyncChannelInboundStream<[MQTTMessage]>
    let writer: NIOAsyncChannelOutboundWriter<ByteBuffer>

    /// Every PUBLISH the broker sends, in order, in batches: each batch is every message that came while the
    /// consumer was busy with the previous one, up to the connection's `maximumBatchSize`; the first waits for at
    /// least one message. So a consumer that writes a batch per statement writes one row per statement while messages
    /// trickle in, and as many as have piled up when they pour in, with no timer and no added latency.
    ///
    /// They start with the connection (so also what a persistent session held before
    /// ``MQTTSubscriber/subscribe(_:qos:)``), and finish when it ends: normally after
    /// ``MQTTSubscriber/disconnect()``, otherwise throwing the reason (``MQTTSubscriberError/connectionClosed`` when
    /// the broker went away, `.protocolError`, `.timedOut`, `.io`).
    ///
    /// ```swift
    /// for try await batch in inbound.batches {
    ///     try await store(batch)
    ///     await inbound.acknowledge(batch.compactMap(\.packetID))
    /// }
    /// ```
    public var batches: MQTTMessageBatches { MQTTMessageBatches(stream: stream) }

    /// The same messages as ``batches``, one at a time.
    ///
    /// ```swift
    /// for try await message in inbound.messages { … }
    /// ```
    public var messages: MQTTMessages { MQTTMessages(stream: stream) }

    /// Acknowledges QoS 1 messages (PUBACK for each packet id, written in one flush), so that the broker no longer
    /// keeps them for this session. Call it only after each message is safely stored, and in the order they came
    /// (MQTT 3.1.1 section 4.6). Packet id 0 is skipped; on a closed connection it does nothing (the broker sends
    /// the messages again).
    ///
    /// ```swift
    /// await inbound.acknowledge(batch.compactMap(\.packetID))
    /// ```
    public func acknowledge(_ packetIDs: [UInt16]) async {
        let ids = packetIDs.filter { $0 != 0 }
        guard !ids.isEmpty else { return }
        try? await writer.write(MQTTEncoder.pubacks(ids, allocator: ByteBufferAllocator()))
    }
}

/// ``MQTTInbound/batches``'s sequence.
public struct MQTTMessageBatches: AsyncSequence, Sendable {
    public typealias Element = [MQTTMessage]
    let stream: NIOAsyncChannelInboundStream<[MQTTMessage]>

    public func makeAsyncIterator() -> Iterator {
        Iterator(base: stream.makeAsyncIterator())
    }

    public struct Iterator: AsyncIteratorProtocol {
        var base: NIOAsyncChannelInboundStream<[MQTTMessage]>.AsyncIterator

        public mutating func next() async throws -> [MQTTMessage]? {
            try await base.next()
        }
    }
}

/// ``MQTTInbound/messages``'s sequence.
public struct MQTTMessages: AsyncSequence, Sendable {
    public typealias Element = MQTTMessage
    let stream: NIOAsyncChannelInboundStream<[MQTTMessage]>

    public func makeAsyncIterator() -> Iterator {
        Iterator(base: stream.makeAsyncIterator())
    }

    public struct Iterator: AsyncIteratorProtocol {
        var base: NIOAsyncChannelInboundStream<[MQTTMessage]>.AsyncIterator
        var batch: [MQTTMessage] = []
        var index = 0

        public mutating func next() async throws -> MQTTMessage? {
            while index == batch.count {
                guard let next = try await base.next() else { return nil }
                (batch, index) = (next, 0)
            }
            defer { index += 1 }
            return batch[index]
        }
    }
}

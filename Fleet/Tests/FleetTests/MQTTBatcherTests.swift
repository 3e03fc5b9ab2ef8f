@testable import FleetIngest
import NIOCore
import NIOEmbedded
import Testing

/// The batcher between the MQTT handler and the NIOAsyncChannel, driven read by read on a testing channel: what it
/// sends up, when, and when it stops reading.
@Suite("MQTTBatcher", .timeLimit(.minutes(1)))
struct MQTTBatcherTests {
    @Test("a batch goes up when asked; unasked, it gathers up to the maximum, then stops reading until the consumer takes one")
    func gathersWithinTheBound() async throws {
        let channel = NIOAsyncTestingChannel()
        let reads = ReadCounter()
        let connection = try await channel.testingEventLoop.executeInContext {
            try channel.pipeline.syncOperations.addHandler(reads)
            try channel.pipeline.syncOperations.addHandler(MQTTBatcher(maximumCount: 3))
            return try NIOAsyncChannel<[MQTTMessage], ByteBuffer>(wrappingChannelSynchronously: channel,
                                                                 configuration: .init(backPressureStrategy: MQTTBatcher.backPressure))
        }
        let m = (1...6).map { MQTTMessage(topic: "t", payload: [UInt8($0)], packetID: UInt16($0), qos: 1,
                                          isDuplicate: false, isRetained: false) }
        /// One socket read bringing `messages`, as the channel delivers it.
        func read(_ messages: MQTTMessage...) async throws {
            try await channel.testingEventLoop.executeInContext {
                for message in messages { channel.pipeline.syncOperations.fireChannelRead(NIOAny(message)) }
                channel.pipeline.fireChannelReadComplete()
            }
        }
        /// The reads that reached the socket so far, once the loop has run what the consumer's side asked of it.
        func readsSoFar() async throws -> Int {
            try await channel.testingEventLoop.executeInContext { reads.count }
        }
        try await connection.executeThenClose { inbound, _ in
            var batches = inbound.makeAsyncIterator()
            // The channel's first read (autoRead, on activation) passes the stream's demand down.
            try await channel.testingEventLoop.executeInContext { channel.pipeline.read() }
            #expect(try await readsSoFar() == 1)
            // Asked: the first message goes up at once, alone. The stream now holds one batch: it asks no more,
            // and the batcher reads on by itself.
            try await read(m[0])
            #expect(try await readsSoFar() == 2)
            try await read(m[1])
            try await read(m[2])
            #expect(try await readsSoFar() == 4)
            // A full batch held: no more reads; the rest waits in the socket and at the broker.
            try await read(m[3])
            #expect(try await readsSoFar() == 4)
            // The consumer takes the first batch: the stream asks for the next, which is all that came meanwhile.
            #expect(try await batches.next() == [m[0]])
            #expect(try await readsSoFar() == 5)
            #expect(try await batches.next() == [m[1], m[2], m[3]])
            // A message when the stream is empty and wants more goes up in the read that brought it.
            try await read(m[4])
            #expect(try await batches.next() == [m[4]])
            // What is held goes up before the reason the connection ended.
            try await read(m[5])
            try await channel.testingEventLoop.executeInContext {
                channel.pipeline.fireErrorCaught(MQTTSubscriberError.connectionClosed)
            }
            #expect(try await batches.next() == [m[5]])
            await #expect(throws: MQTTSubscriberError.connectionClosed) { try await batches.next() }
        }
    }

    @Test("more than the maximum in one read goes up in batches of the maximum")
    func splitsAtTheMaximum() async throws {
        let channel = NIOAsyncTestingChannel()
        let connection = try await channel.testingEventLoop.executeInContext {
            try channel.pipeline.syncOperations.addHandler(MQTTBatcher(maximumCount: 2))
            return try NIOAsyncChannel<[MQTTMessage], ByteBuffer>(wrappingChannelSynchronously: channel,
                                                                 configuration: .init(backPressureStrategy: MQTTBatcher.backPressure))
        }
        let m = (1...5).map { MQTTMessage(topic: "t", payload: [UInt8($0)], packetID: nil, qos: 0,
                                          isDuplicate: false, isRetained: false) }
        try await connection.executeThenClose { inbound, _ in
            var batches = inbound.makeAsyncIterator()
            try await channel.testingEventLoop.executeInContext {
                channel.pipeline.read()
                for message in m { channel.pipeline.syncOperations.fireChannelRead(NIOAny(message)) }
                channel.pipeline.fireChannelReadComplete()
            }
            #expect(try await batches.next() == [m[0], m[1]])
            #expect(try await batches.next() == [m[2], m[3]])
            #expect(try await batches.next() == [m[4]])
            try await channel.testingEventLoop.executeInContext { channel.pipeline.fireChannelInactive() }
            #expect(try await batches.next() == nil)
        }
    }
}

/// Counts the reads that reach the socket.
private final class ReadCounter: ChannelOutboundHandler, @unchecked Sendable {
    typealias OutboundIn = ByteBuffer
    var count = 0

    func read(context: ChannelHandlerContext) {
        count += 1
        context.read()
    }
}

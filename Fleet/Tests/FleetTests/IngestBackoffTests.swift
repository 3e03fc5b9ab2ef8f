import FleetCore
import FleetIngest
import FleetTestSupport
import GPSDLocation
import Logging
import NIOCore
import NIOPosix
import Testing

/// The ingest's reconnect delay against a broker that drops every connection right after its SUBACK: the SUBACK
/// proves nothing, so the delay grows instead of starting over each time.
@Suite(.enabled(if: PostgreSQL.isAvailable), .timeLimit(.minutes(3)))
struct IngestBackoffTests {
    @Test("a connection dropped right after SUBACK does not reset the backoff: the 5th delay is 16 times the first")
    func droppedAfterSubackBacksOff() async throws {
        let database = try await PostgreSQL.start()
        do {
            try await database.createDatabase("fleet")
            let (connections, connected) = AsyncStream<ContinuousClock.Instant>.makeStream()
            let broker = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .childChannelInitializer { channel in
                    connected.yield(.now)
                    return channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(SubackThenClose())
                    }
                }
                .bind(host: "127.0.0.1", port: 0).get()
            let port = try #require(broker.localAddress?.port)
            let logger = Logger(label: "IngestBackoffTests", factory: { _ in SwiftLogNoOpLogHandler() })
            let store = try FixStore(url: database.url(database: "fleet"), logger: logger)
            var configuration = IngestConfiguration(broker: BrokerAddress(host: "127.0.0.1", port: UInt16(port)))
            configuration.broker.reconnectPolicy = ReconnectPolicy(initialDelay: .milliseconds(50),
                                                                   maximumDelay: .seconds(10), jitter: 0)
            let ingest = Ingest(configuration: configuration, store: store, logger: logger)
            var times: [ContinuousClock.Instant] = []
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await store.run() }
                group.addTask {   // until cancelled
                    try? await store.prepare()
                    _ = try? await ingest.run()
                }
                for await time in connections {
                    times.append(time)
                    if times.count == 6 { break }
                }
                group.cancelAll()
            }
            try await broker.close()
            // The delays before connections 2 to 6: 50, 100, 200, 400, 800 ms at least (the delay is a lower bound).
            let gaps = zip(times.dropFirst(), times).map { $0 - $1 }
            #expect(gaps.count == 5)
            #expect(gaps.last.map { $0 >= .milliseconds(800) } == true, "\(gaps)")
            // Each of the first five was subscribed (the sixth may not be yet).
            #expect(ingest.statistics.connections >= 5)
        } catch {
            await database.stop()
            throw error
        }
        await database.stop()
    }
}

/// A broker that answers CONNECT with CONNACK and SUBSCRIBE with SUBACK (QoS 1 granted), then closes.
private final class SubackThenClose: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    private var received: ByteBuffer?

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        if received == nil { received = bytes } else { received!.writeBuffer(&bytes) }
        // CONNECT and SUBSCRIBE are short: one byte of Remaining Length.
        while let buffer = received, buffer.readableBytes >= 2,
              let header = buffer.getInteger(at: buffer.readerIndex, as: UInt8.self),
              let length = buffer.getInteger(at: buffer.readerIndex + 1, as: UInt8.self),
              buffer.readableBytes >= 2 + Int(length) {
            let id = buffer.getInteger(at: buffer.readerIndex + 2, as: UInt16.self) ?? 0
            received!.moveReaderIndex(forwardBy: 2 + Int(length))
            switch header >> 4 {
            case 1:
                context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: [0x20, 0x02, 0x00, 0x00])),
                                      promise: nil)
            case 8:
                let suback: [UInt8] = [0x90, 0x03, UInt8(id >> 8), UInt8(id & 0xFF), 0x01]
                let channel = context.channel
                context.writeAndFlush(wrapOutboundOut(channel.allocator.buffer(bytes: suback)))
                    .whenComplete { _ in channel.close(promise: nil) }
            default:
                break
            }
        }
    }
}

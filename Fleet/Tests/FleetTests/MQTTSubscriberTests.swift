import FleetIngest
import FleetTestSupport
import Foundation
import NIOCore
import NIOPosix
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The ingest's MQTT subscriber against a real Mosquitto, and against a fake peer that sends malformed packets.
@Suite("MQTTSubscriber", .enabled(if: Mosquitto.isAvailable), .timeLimit(.minutes(3)))
struct MQTTSubscriberTests {
    typealias Messages = MQTTMessages.Iterator

    @Test("subscribes at QoS 1; 1,000 messages arrive in order, each with a packet id, and are acknowledged")
    func thousandMessagesInOrder() async throws {
        // An in-flight window of 100: the 1,000 can only all arrive if the acknowledgements reach the broker.
        try await withBroker(maxInflight: 100) { broker in
            let subscriber = try await MQTTSubscriber.connect(host: "127.0.0.1", port: broker.port,
                                                              clientID: "ingest-thousand", cleanSession: true)
            #expect(subscriber.sessionPresent == false)
            #expect(try await subscriber.subscribe("fleet/+/fix", qos: 1) == 1)
            try await subscriber.receive { inbound in
                var messages = inbound.messages.makeAsyncIterator()
                let lines = (1...1000).map { "fix \($0)" }
                try await publish(lines, port: broker.port)
                var received: [MQTTMessage] = []
                while received.count < lines.count {
                    let batch = try await receive(50, from: &messages)
                    received += batch
                    await inbound.acknowledge(batch.compactMap(\.packetID))
                }
                #expect(received.map(\.text) == lines)
                #expect(received.allSatisfy { $0.topic == "fleet/r1/fix" && $0.qos == 1 && $0.packetID != nil })
                #expect(received.allSatisfy { !$0.isDuplicate && !$0.isRetained })
                await subscriber.disconnect()
                // After DISCONNECT the stream ends without an error.
                #expect(try await messages.next() == nil)
            }
        }
    }

    @Test("a persistent session keeps what was published while the subscriber was away")
    func persistentSession() async throws {
        try await withBroker { broker in
            let first = try await MQTTSubscriber.connect(host: "127.0.0.1", port: broker.port, clientID: "ingest")
            #expect(first.sessionPresent == false)
            #expect(try await first.subscribe("fleet/+/fix", qos: 1) == 1)
            await first.disconnect()

            let lines = (1...50).map { "away \($0)" }
            try await publish(lines, port: broker.port)

            let second = try await MQTTSubscriber.connect(host: "127.0.0.1", port: broker.port, clientID: "ingest")
            #expect(second.sessionPresent == true)
            try await second.receive { inbound in
                var messages = inbound.messages.makeAsyncIterator()
                let received = try await receive(50, from: &messages)
                #expect(received.map(\.text) == lines)
                #expect(received.allSatisfy { $0.qos == 1 && $0.packetID != nil })
                await inbound.acknowledge(received.compactMap(\.packetID))
                await second.disconnect()
            }
        }
    }

    @Test("messages not acknowledged before the connection broke come again, marked duplicate; acknowledged ones do not")
    func unacknowledgedAreRedelivered() async throws {
        try await withBroker { broker in
            let first = try await MQTTSubscriber.connect(host: "127.0.0.1", port: broker.port, clientID: "ingest")
            try await first.subscribe("fleet/+/fix", qos: 1)
            let lines = (1...50).map { "fix \($0)" }
            try await first.receive { inbound in
                var messages = inbound.messages.makeAsyncIterator()
                try await publish(lines, port: broker.port)
                let received = try await receive(50, from: &messages)
                #expect(received.map(\.text) == lines)
                await inbound.acknowledge(received.prefix(30).compactMap(\.packetID))
                // The broker reads in order: once this SUBACK is back, it has handled the 30 PUBACKs.
                try await first.subscribe("fleet/sync", qos: 1)
                await first.closeWithoutDisconnect()
                await #expect(throws: MQTTSubscriberError.connectionClosed) { try await messages.next() }
            }

            let second = try await MQTTSubscriber.connect(host: "127.0.0.1", port: broker.port, clientID: "ingest")
            #expect(second.sessionPresent == true)
            try await second.receive { inbound in
                var again = inbound.messages.makeAsyncIterator()
                try await publish(["end"], port: broker.port)
                var redelivered: [MQTTMessage] = []
                while true {
                    let message = try #require(try await again.next())
                    if message.text == "end" {
                        #expect(message.isDuplicate == false)
                        await inbound.acknowledge(message.packetID.map { [$0] } ?? [])
                        break
                    }
                    redelivered.append(message)
                }
                #expect(redelivered.map(\.text) == Array(lines.suffix(20)))
                #expect(redelivered.allSatisfy { $0.isDuplicate && $0.packetID != nil })
                await inbound.acknowledge(redelivered.compactMap(\.packetID))
                await second.disconnect()
            }
        }
    }

    @Test("a 2 MB QoS 1 PUBLISH comes unread, with its packet id to acknowledge; the next message follows on the same connection")
    func oversizedPublish() async throws {
        try await withBroker { broker in
            let subscriber = try await MQTTSubscriber.connect(host: "127.0.0.1", port: broker.port,
                                                              clientID: "ingest-oversized", cleanSession: true)
            try await subscriber.subscribe("fleet/+/fix", qos: 1)
            try await subscriber.receive { inbound in
                var messages = inbound.messages.makeAsyncIterator()
                try FleetFaultTests.publish(port: broker.port, topic: "fleet/big/fix",
                                            bytes: [UInt8](repeating: UInt8(ascii: "x"), count: 2_000_000))
                try await publish(["valid"], port: broker.port)
                let refused = try #require(try await messages.next())
                #expect(refused.topic == "fleet/big/fix" && refused.payload.isEmpty && refused.packetID != nil)
                #expect(refused.refusal == .tooLarge(remainingLength: 2_000_017))
                await inbound.acknowledge(refused.packetID.map { [$0] } ?? [])
                let valid = try #require(try await messages.next())
                #expect(valid.text == "valid")
                await inbound.acknowledge(valid.packetID.map { [$0] } ?? [])
                await subscriber.disconnect()
            }
        }
    }

    @Test("a wrong password is refused with the return code Mosquitto sends; the right one connects")
    func wrongPassword() async throws {
        try await withBroker(users: ["ingest": "secret"]) { broker in
            await #expect(throws: MQTTSubscriberError.refused(returnCode: 5)) {
                _ = try await MQTTSubscriber.connect(host: "127.0.0.1", port: broker.port, clientID: "ingest",
                                                     username: "ingest", password: "wrong")
            }
            await #expect(throws: MQTTSubscriberError.refused(returnCode: 5)) {
                _ = try await MQTTSubscriber.connect(host: "127.0.0.1", port: broker.port, clientID: "ingest")
            }
            let subscriber = try await MQTTSubscriber.connect(host: "127.0.0.1", port: broker.port, clientID: "ingest",
                                                              username: "ingest", password: "secret")
            #expect(try await subscriber.subscribe("fleet/+/fix", qos: 1) == 1)
            await subscriber.disconnect()
        }
    }

    @Test("the broker killed: the messages stream ends with an error, a pending subscribe fails")
    func brokerKilled() async throws {
        try await withBroker { broker in
            let subscriber = try await MQTTSubscriber.connect(host: "127.0.0.1", port: broker.port, clientID: "ingest")
            try await subscriber.subscribe("fleet/+/fix", qos: 1)
            try await publish(["before"], port: broker.port)
            try await subscriber.receive { inbound in
                var messages = inbound.messages.makeAsyncIterator()
                let before = try await messages.next()
                #expect(before?.text == "before")
                await broker.kill()
                await #expect(throws: MQTTSubscriberError.connectionClosed) {
                    while try await messages.next() != nil {}
                }
                await #expect(throws: MQTTSubscriberError.connectionClosed) {
                    try await subscriber.subscribe("fleet/other", qos: 1)
                }
            }
        }
    }

    /// Runs `body` with a fresh broker, stopped (and its directory removed) afterwards.
    func withBroker(users: [String: String] = [:], maxInflight: Int = 1000,
                            extraConfiguration: [String] = [],
                            _ body: (Mosquitto) async throws -> Void) async throws {
        let broker = try await Mosquitto.start(users: users, maxInflight: maxInflight,
                                               extraConfiguration: extraConfiguration)
        do {
            try await body(broker)
        } catch {
            await broker.stop()
            throw error
        }
        await broker.stop()
    }

    /// Publishes each of `lines` as a QoS 1 message to `topic` with `mosquitto_pub -l`, which exits once the broker
    /// has acknowledged them all.
    func publish(_ lines: [String], port: UInt16, topic: String = "fleet/r1/fix") async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_pub")
        process.arguments = ["-h", "127.0.0.1", "-p", String(port), "-q", "1", "-t", topic, "-l"]
        let input = Pipe()
        process.standardInput = input
        let (exited, exit) = AsyncStream<Int32>.makeStream()
        process.terminationHandler = { exit.yield($0.terminationStatus) }
        try process.run()
        try input.fileHandleForWriting.write(contentsOf: Data(lines.map { $0 + "\n" }.joined().utf8))
        try input.fileHandleForWriting.close()
        var statuses = exited.makeAsyncIterator()
        let status = await statuses.next()
        #expect(status == 0, "mosquitto_pub exited with \(String(describing: status))")
    }

    /// A self-signed certificate authority: `prefix.pem` and `prefix.key`.
    func makeCertificateAuthority(_ prefix: String) async throws {
        try await run("/usr/bin/openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                                           "-nodes", "-days", "1", "-subj", "/CN=fleet test CA",
                                           "-addext", "basicConstraints=critical,CA:TRUE",
                                           "-addext", "keyUsage=critical,keyCertSign,cRLSign",
                                           "-keyout", prefix + ".key", "-out", prefix + ".pem"])
    }

    /// Runs `executable` and expects it to exit with status 0.
    func run(_ executable: String, _ arguments: [String]) async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        let (exited, exit) = AsyncStream<Int32>.makeStream()
        process.terminationHandler = { exit.yield($0.terminationStatus) }
        try process.run()
        var statuses = exited.makeAsyncIterator()
        let status = await statuses.next()
        try #require(status == 0, "\(executable) \(arguments.joined(separator: " ")) exited with \(String(describing: status))")
    }

    /// The next `count` messages.
    func receive(_ count: Int, from messages: inout Messages) async throws -> [MQTTMessage] {
        var received: [MQTTMessage] = []
        while received.count < count {
            received.append(try #require(try await messages.next(), "the stream ended after \(received.count)"))
        }
        return received
    }

    /// Runs `body` with the port of a loopback listener that sends `bytes` to whoever connects, then stays silent.
    func withFakePeer(sending bytes: [UInt8], _ body: (UInt16) async throws -> Void) async throws {
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(FakePeer(bytes: bytes))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let port = try #require(server.localAddress?.port)
        do {
            try await body(UInt16(port))
        } catch {
            try? await server.close()
            throw error
        }
        try await server.close()
    }
}

/// Sends its bytes as soon as a client connects.
private final class FakePeer: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    let bytes: [UInt8]

    init(bytes: [UInt8]) { self.bytes = bytes }

    func channelActive(context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: bytes)), promise: nil)
    }
}

extension MQTTMessage {
    var text: String { String(decoding: payload, as: UTF8.self) }
}

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

    @Test("TLS: a server certificate from the given CA is accepted; one from another CA is refused")
    func tls() async throws {
        let directory = try makeServerDirectory("tls")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = { (name: String) in directory.appendingPathComponent(name).path }
        try await makeCertificateAuthority(path("ca"))
        try await makeCertificateAuthority(path("other-ca"))
        try await run("/usr/bin/openssl", ["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                                           "-keyout", path("server.key"), "-out", path("server.csr"),
                                           "-subj", "/CN=fleet broker"])
        try "subjectAltName=IP:127.0.0.1\n".write(toFile: path("san.cnf"), atomically: true, encoding: .utf8)
        try await run("/usr/bin/openssl", ["x509", "-req", "-in", path("server.csr"), "-CA", path("ca.pem"),
                                           "-CAkey", path("ca.key"), "-CAcreateserial", "-days", "1",
                                           "-extfile", path("san.cnf"), "-out", path("server.pem")])
        let tlsPort = freeLoopbackPort()
        let extra = ["listener \(tlsPort) 127.0.0.1", "cafile \(path("ca.pem"))", "certfile \(path("server.pem"))",
                     "keyfile \(path("server.key"))"]
        try await withBroker(extraConfiguration: extra) { broker in
            let subscriber = try await MQTTSubscriber.connect(host: "127.0.0.1", port: tlsPort, clientID: "ingest",
                                                              caFile: path("ca.pem"))
            #expect(try await subscriber.subscribe("fleet/+/fix", qos: 1) == 1)
            try await publish(["over TLS"], port: broker.port)
            try await subscriber.receive { inbound in
                var messages = inbound.messages.makeAsyncIterator()
                let message = try #require(try await messages.next())
                #expect(message.text == "over TLS")
                await inbound.acknowledge(message.packetID.map { [$0] } ?? [])
                await subscriber.disconnect()

                do {
                    _ = try await MQTTSubscriber.connect(host: "127.0.0.1", port: tlsPort, clientID: "ingest",
                                                         caFile: path("other-ca.pem"))
                    Issue.record("connected to a server whose certificate the CA did not sign")
                } catch let error as MQTTSubscriberError {
                    guard case .io(let what) = error else { Issue.record("\(error)"); return }
                    #expect(what.contains("TLS"))
                }
            }
        }
    }

    @Test("no PINGRESP by the next keepalive tick: the stream ends with a time-out")
    func keepAliveTimeOut() async throws {
        try await withFakePeer(sending: [0x20, 0x02, 0x00, 0x00]) { port in
            let subscriber = try await MQTTSubscriber.connect(host: "127.0.0.1", port: port, clientID: "ingest",
                                                              keepAlive: 1)
            try await subscriber.receive { inbound in
                var messages = inbound.messages.makeAsyncIterator()
                do {
                    while try await messages.next() != nil {}
                    Issue.record("the stream ended without an error")
                } catch let error as MQTTSubscriberError {
                    guard case .timedOut(let what) = error else { Issue.record("\(error)"); return }
                    #expect(what.contains("PINGRESP"))
                }
            }
        }
    }

    @Test("nothing listening: an I/O error")
    func nothingListening() async throws {
        let port = freeLoopbackPort()
        do {
            _ = try await MQTTSubscriber.connect(host: "127.0.0.1", port: port, clientID: "ingest")
            Issue.record("connected to a closed port")
        } catch {
            guard case .io = error else { Issue.record("\(error)"); return }
        }
    }

    @Test("malformed packets before CONNACK: a protocol error, no crash", arguments: [
        ([0x30, 0x80, 0x80, 0x80, 0x80, 0x01], "Remaining Length longer than 4 bytes"),
        ([0x90, 0xFF, 0xFF, 0xFF, 0x7F], "more than"),
        ([0x20, 0x03, 0x00, 0x00, 0x00], "malformed CONNACK"),
        ([0x30, 0x03, 0x00, 0x01, 0x61], "PUBLISH before CONNACK"),
        ([0x90, 0x03, 0x00, 0x01, 0x01], "SUBACK before CONNACK"),
    ] as [([UInt8], String)])
    func malformedBeforeConnack(bytes: [UInt8], expected: String) async throws {
        try await withFakePeer(sending: bytes) { port in
            do {
                _ = try await MQTTSubscriber.connect(host: "127.0.0.1", port: port, clientID: "ingest")
                Issue.record("connected to a peer that sent \(bytes)")
            } catch let error as MQTTSubscriberError {
                guard case .protocolError(let what) = error else { Issue.record("\(error)"); return }
                #expect(what.contains(expected))
            }
        }
    }

    @Test("a packet after CONNACK that makes the stream unreadable: the messages stream ends with a protocol error",
          arguments: [
        ([0x30, 0x80, 0x80, 0x80, 0x80, 0x01], "Remaining Length longer than 4 bytes"),
        ([0x90, 0xFF, 0xFF, 0xFF, 0x7F], "more than"),  // a SUBACK of 256 MB
        ([0x92, 0x03, 0x00, 0x01, 0x01], "SUBACK with fixed header flags 2"),
    ] as [([UInt8], String)])
    func malformedAfterConnack(bytes: [UInt8], expected: String) async throws {
        // A good CONNACK, a good QoS 0 PUBLISH to `t` ("ok"), then the malformed packet.
        let prefix: [UInt8] = [0x20, 0x02, 0x00, 0x00, 0x30, 0x05, 0x00, 0x01, 0x74, 0x6F, 0x6B]
        try await withFakePeer(sending: prefix + bytes) { port in
            let subscriber = try await MQTTSubscriber.connect(host: "127.0.0.1", port: port, clientID: "ingest")
            try await subscriber.receive { inbound in
                var messages = inbound.messages.makeAsyncIterator()
                let first = try #require(try await messages.next())
                #expect(first.topic == "t" && first.text == "ok" && first.qos == 0 && first.packetID == nil)
                do {
                    while try await messages.next() != nil {}
                    Issue.record("the stream ended without an error")
                } catch let error as MQTTSubscriberError {
                    guard case .protocolError(let what) = error else { Issue.record("\(error)"); return }
                    #expect(what.contains(expected))
                }
            }
        }
    }

    @Test("a PUBLISH malformed within a sound length comes refused, with its packet id if it has one; the stream goes on",
          arguments: [
        ([0x30, 0x03, 0x00, 0x10, 0x61], nil, "PUBLISH (topic)"),  // topic longer than the packet
        ([0x34, 0x05, 0x00, 0x01, 0x61, 0x00, 0x01], nil, "QoS 2"),
        ([0x32, 0x05, 0x00, 0x01, 0x61, 0x00, 0x00], nil, "packet id"),  // QoS 1 with packet id 0
        ([0x32, 0x05, 0x00, 0x01, 0xFF, 0x00, 0x07], 7, "not UTF-8"),
    ] as [([UInt8], UInt16?, String)])
    func malformedPublishAfterConnack(bytes: [UInt8], packetID: UInt16?, expected: String) async throws {
        // A good CONNACK, the malformed PUBLISH, then a good QoS 0 PUBLISH to `t` ("ok").
        let connack: [UInt8] = [0x20, 0x02, 0x00, 0x00], good: [UInt8] = [0x30, 0x05, 0x00, 0x01, 0x74, 0x6F, 0x6B]
        try await withFakePeer(sending: connack + bytes + good) { port in
            let subscriber = try await MQTTSubscriber.connect(host: "127.0.0.1", port: port, clientID: "ingest")
            try await subscriber.receive { inbound in
                var messages = inbound.messages.makeAsyncIterator()
                let refused = try #require(try await messages.next())
                guard case .malformed(let what) = refused.refusal else { Issue.record("\(refused)"); return }
                #expect(what.contains(expected) && refused.packetID == packetID && refused.payload.isEmpty)
                let next = try #require(try await messages.next())
                #expect(next.topic == "t" && next.text == "ok" && next.refusal == nil)
                await subscriber.disconnect()
            }
        }
    }

    // MARK: Helpers

    /// Runs `body` with a fresh broker, stopped (and its directory removed) afterwards.
    private func withBroker(users: [String: String] = [:], maxInflight: Int = 1000,
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
    private func publish(_ lines: [String], port: UInt16, topic: String = "fleet/r1/fix") async throws {
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
    private func makeCertificateAuthority(_ prefix: String) async throws {
        try await run("/usr/bin/openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                                           "-nodes", "-days", "1", "-subj", "/CN=fleet test CA",
                                           "-addext", "basicConstraints=critical,CA:TRUE",
                                           "-addext", "keyUsage=critical,keyCertSign,cRLSign",
                                           "-keyout", prefix + ".key", "-out", prefix + ".pem"])
    }

    /// Runs `executable` and expects it to exit with status 0.
    private func run(_ executable: String, _ arguments: [String]) async throws {
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
    private func receive(_ count: Int, from messages: inout Messages) async throws -> [MQTTMessage] {
        var received: [MQTTMessage] = []
        while received.count < count {
            received.append(try #require(try await messages.next(), "the stream ended after \(received.count)"))
        }
        return received
    }

    /// Runs `body` with the port of a loopback listener that sends `bytes` to whoever connects, then stays silent.
    private func withFakePeer(sending bytes: [UInt8], _ body: (UInt16) async throws -> Void) async throws {
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

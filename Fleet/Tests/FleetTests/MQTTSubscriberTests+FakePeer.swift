import FleetIngest
import FleetTestSupport
import Foundation
import NIOCore
import NIOPosix
import Testing
#if canImport(Glibc)
import Glibc
#endif

// The subscriber against a peer of our own that sends what a broker must not: time-outs and malformed packets.
extension MQTTSubscriberTests {
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
}

import Foundation
import FleetTestSupport
@testable import FleetUplink
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// libmosquitto through `MQTTConnection`, against a real Mosquitto each, driven the way the uplink drives it: one
/// thread of its own polling the sockets.
@Suite(.enabled(if: Mosquitto.isAvailable), .timeLimit(.minutes(3)))
struct MQTTConnectionTests {
    @Test func connectIsAcceptedAndDisconnectIsClean() async throws {
        let broker = try await Mosquitto.start()
        defer { Task { await broker.stop() } }
        let (results, disconnects, socketAfter) = try await onOwnThread {
            let connection = try MQTTConnection(clientID: "accepted")
            var results: [MQTTConnectResult] = []
            var disconnects: [Int32] = []
            connection.onConnect = { results.append($0) }
            connection.onDisconnect = { disconnects.append($0) }
            try connection.connect(host: "127.0.0.1", port: broker.port, keepAlive: 30)
            try pump([connection]) { !results.isEmpty }
            connection.disconnect()
            try pump([connection]) { !disconnects.isEmpty }
            return (results, disconnects, connection.socket)
        }
        #expect(results == [.accepted])
        #expect(disconnects == [0])
        #expect(socketAfter == -1)
    }

    /// 2,000 QoS 1 messages published at once with 100 in flight: libmosquitto writes 100, keeps the rest, and
    /// sends one more for each PUBACK. A QoS 0 marker (which no cap holds back) published right after them, with the
    /// publisher's PUBACKs left unread, shows how many went out first.
    @Test func twoThousandQoS1MessagesAreEachAcknowledgedOnceAndDelivered() async throws {
        let broker = try await Mosquitto.start()
        defer { Task { await broker.stop() } }
        let count = 2000
        let outcome = try await onOwnThread {
            let subscriber = try subscribed(to: "fleet/bulk/fix", broker: broker)
            let publisher = try MQTTConnection(clientID: "bulk-publisher")
            try publisher.setMaxInflight(100)
            var acknowledged: [Int32] = []
            publisher.onPublish = { acknowledged.append($0) }
            try connectAccepted(publisher, broker: broker)
            var returned: [Int32] = []
            for index in 0..<count {
                returned.append(try publisher.publish(topic: "fleet/bulk/fix", payload: Array("fix \(index)".utf8),
                                                      qos: 1, retain: false))
            }
            let marker = try publisher.publish(topic: "fleet/bulk/fix", payload: Array("marker".utf8), qos: 0,
                                               retain: false)
            try pump([subscriber.connection]) { subscriber.messages.contains { $0.qos == 0 } }
            let beforeMarker = subscriber.messages.count - 1
            try pump([publisher, subscriber.connection]) {
                acknowledged.count >= count + 1 && subscriber.messages.count >= count + 1
            }
            // A QoS 0 message is reported once written.
            #expect(acknowledged.filter { $0 == marker }.count == 1)
            return (returned, acknowledged.filter { $0 != marker }, beforeMarker,
                    subscriber.messages.filter { $0.qos == 1 })
        }
        let (returned, acknowledged, beforeMarker, received) = outcome
        #expect(beforeMarker == 100)
        #expect(Set(returned).count == count)
        #expect(acknowledged.sorted() == returned.sorted())
        #expect(received.map { String(decoding: $0.payload, as: UTF8.self) } == (0..<count).map { "fix \($0)" })
        #expect(received.allSatisfy { !$0.retain })
    }

    /// Before `connect`, `publish` throws `noConnection` and nothing is sent (libmosquitto 2.0.11 itself would keep
    /// such a message and send it after connecting, behind later ones); between `connect` and CONNACK the message
    /// waits behind CONNECT. A last message shows nothing else arrived before it.
    @Test func publishingBeforeConnectFailsAndBeforeConnackWaits() async throws {
        let broker = try await Mosquitto.start()
        defer { Task { await broker.stop() } }
        let (publishError, acknowledged, ids, received) = try await onOwnThread {
            let subscriber = try subscribed(to: "fleet/early/fix", broker: broker)
            let publisher = try MQTTConnection(clientID: "early-publisher")
            var results: [MQTTConnectResult] = []
            var acknowledged: [Int32] = []
            publisher.onConnect = { results.append($0) }
            publisher.onPublish = { acknowledged.append($0) }
            let publishError = try failure {
                _ = try publisher.publish(topic: "fleet/early/fix", payload: [1], qos: 1, retain: false)
            }
            try publisher.connect(host: "127.0.0.1", port: broker.port, keepAlive: 30)
            let early = try publisher.publish(topic: "fleet/early/fix", payload: [2], qos: 1, retain: false)
            #expect(results.isEmpty)
            try pump([publisher, subscriber.connection]) { acknowledged.contains(early) }
            let last = try publisher.publish(topic: "fleet/early/fix", payload: [3], qos: 1, retain: false)
            try pump([publisher, subscriber.connection]) {
                acknowledged.contains(last) && subscriber.messages.contains { $0.payload == [3] }
            }
            return (publishError, acknowledged, [early, last], subscriber.messages)
        }
        #expect(publishError.code == MQTTError.noConnection)
        #expect(acknowledged == ids)
        #expect(received.map(\.payload) == [[2], [3]])
    }

    @Test func aRetainedMessageReachesALaterSubscriber() async throws {
        let broker = try await Mosquitto.start()
        defer { Task { await broker.stop() } }
        let received = try await onOwnThread {
            let publisher = try MQTTConnection(clientID: "retainer")
            var acknowledged: [Int32] = []
            publisher.onPublish = { acknowledged.append($0) }
            try connectAccepted(publisher, broker: broker)
            let id = try publisher.publish(topic: "fleet/van-7/state", payload: Array("newest".utf8), qos: 1,
                                           retain: true)
            try pump([publisher]) { acknowledged == [id] }
            var disconnected = false
            publisher.onDisconnect = { _ in disconnected = true }
            publisher.disconnect()
            try pump([publisher]) { disconnected }

            let subscriber = try subscribed(to: "fleet/+/state", broker: broker)
            try pump([subscriber.connection]) { !subscriber.messages.isEmpty }
            return subscriber.messages
        }
        #expect(received == [MQTTMessage(topic: "fleet/van-7/state", payload: Array("newest".utf8), qos: 1,
                                         retain: true)])
    }

    @Test func aWrongPasswordIsRefused() async throws {
        let broker = try await Mosquitto.start(users: ["robot": "secret"])
        defer { Task { await broker.stop() } }
        let (wrong, right) = try await onOwnThread {
            func attempt(_ password: String) throws -> (MQTTConnectResult?, MQTTError?, [Int32]) {
                let connection = try MQTTConnection(clientID: "robot-\(password)")
                try connection.setCredentials(username: "robot", password: password)
                var result: MQTTConnectResult?
                var disconnects: [Int32] = []
                connection.onConnect = { result = $0 }
                connection.onDisconnect = { disconnects.append($0) }
                try connection.connect(host: "127.0.0.1", port: broker.port, keepAlive: 30)
                do {
                    try pump([connection]) { result == .accepted }
                    return (result, nil, disconnects)
                } catch let error as MQTTError {
                    return (result, error, disconnects)
                }
            }
            return (try attempt("not-the-secret"), try attempt("secret"))
        }
        guard case .refused(let code, let reason) = wrong.0 else {
            Issue.record("a wrong password gave \(String(describing: wrong.0))")
            return
        }
        #expect(code == 5 || code == 4)
        #expect(reason.hasPrefix("Connection Refused"))
        #expect(wrong.1?.code == MQTTError.connectionRefused)
        #expect(wrong.2 == [MQTTError.connectionRefused])
        #expect(right.0 == .accepted)
        #expect(right.1 == nil)
    }

    /// The connection dies without DISCONNECT: the test shuts its socket down (`shutdown`, so the descriptor stays
    /// libmosquitto's and no other file can take its number), which the broker sees as the peer closing the TCP
    /// connection. A second client that ended with DISCONNECT must not have its will published; the subscriber's
    /// own marker, published after the death, shows the broker had handled both ends before the test looks.
    @Test func theWillIsPublishedWhenTheConnectionDiesWithoutDisconnect() async throws {
        let broker = try await Mosquitto.start()
        defer { Task { await broker.stop() } }
        let received = try await onOwnThread {
            let subscriber = try subscribed(to: "fleet/+/status", broker: broker)
            func withWill(_ vehicle: String) throws -> MQTTConnection {
                let connection = try MQTTConnection(clientID: vehicle)
                try connection.setWill(topic: "fleet/\(vehicle)/status", payload: Array("\(vehicle) offline".utf8),
                                       qos: 1, retain: false)
                try connectAccepted(connection, broker: broker)
                return connection
            }
            let polite = try withWill("polite")
            var politeGone = false
            polite.onDisconnect = { politeGone = $0 == 0 }
            polite.disconnect()
            try pump([polite]) { politeGone }

            let dying = try withWill("dying")
            #expect(shutdown(dying.socket, Int32(SHUT_RDWR)) == 0)
            try pump([subscriber.connection]) { !subscriber.messages.isEmpty }
            let marker = try subscriber.connection.publish(topic: "fleet/marker/status", payload: Array("marker".utf8),
                                                           qos: 1, retain: false)
            var markerAcknowledged = false
            subscriber.connection.onPublish = { markerAcknowledged = markerAcknowledged || $0 == marker }
            try pump([subscriber.connection]) { markerAcknowledged && subscriber.messages.count >= 2 }
            return subscriber.messages
        }
        #expect(received.map(\.topic) == ["fleet/dying/status", "fleet/marker/status"])
        #expect(received.first?.payload == Array("dying offline".utf8))
    }

    @Test func tlsWithTheRightCAIsAcceptedAndWithAnotherIsRefused() async throws {
        let certificates = try makeServerDirectory("mqtt-tls")
        defer { try? FileManager.default.removeItem(at: certificates) }
        let server = try Mosquitto.makeCertificates(in: certificates.appendingPathComponent("server"))
        let otherCA = try Mosquitto.makeCertificates(in: certificates.appendingPathComponent("other")).caFile
        let broker = try await Mosquitto.start(tls: server)
        defer { Task { await broker.stop() } }
        let tlsPort = try #require(broker.tlsPort)
        let (accepted, acknowledged, refusal) = try await onOwnThread {
            let trusting = try MQTTConnection(clientID: "tls-trusting")
            try trusting.setTLS(caFile: server.caFile)
            var result: MQTTConnectResult?
            var acknowledged: [Int32] = []
            trusting.onConnect = { result = $0 }
            trusting.onPublish = { acknowledged.append($0) }
            try trusting.connect(host: "127.0.0.1", port: tlsPort, keepAlive: 30)
            try pump([trusting]) { result != nil }
            let id = try trusting.publish(topic: "fleet/tls/fix", payload: [42], qos: 1, retain: false)
            try pump([trusting]) { acknowledged.contains(id) }

            let doubting = try MQTTConnection(clientID: "tls-doubting")
            try doubting.setTLS(caFile: otherCA)
            var doubtingResult: MQTTConnectResult?
            doubting.onConnect = { doubtingResult = $0 }
            let refusal = try failure {
                try doubting.connect(host: "127.0.0.1", port: tlsPort, keepAlive: 30)
                try pump([doubting]) { doubtingResult != nil }
            }
            #expect(doubtingResult == nil)
            return (result, acknowledged, refusal)
        }
        #expect(accepted == .accepted)
        #expect(acknowledged.count == 1)
        #expect(refusal.code == MQTTError.tls)
    }

    @Test func tlsChecksTheHostName() async throws {
        let certificates = try makeServerDirectory("mqtt-tls-name")
        defer { try? FileManager.default.removeItem(at: certificates) }
        // Signed by the CA the client trusts, but for another address than the one it connects to.
        let server = try Mosquitto.makeCertificates(in: certificates, ipAddress: "127.0.0.2")
        let broker = try await Mosquitto.start(tls: server)
        defer { Task { await broker.stop() } }
        let tlsPort = try #require(broker.tlsPort)
        let (result, refusal) = try await onOwnThread {
            let connection = try MQTTConnection(clientID: "tls-name")
            try connection.setTLS(caFile: server.caFile)
            var result: MQTTConnectResult?
            connection.onConnect = { result = $0 }
            let refusal = try failure {
                try connection.connect(host: "127.0.0.1", port: tlsPort, keepAlive: 30)
                try pump([connection]) { result != nil }
            }
            return (result, refusal)
        }
        #expect(result == nil)
        #expect(refusal.code == MQTTError.tls)
    }

    @Test func aMissingCAFileIsAnError() throws {
        let connection = try MQTTConnection(clientID: "no-ca")
        #expect(throws: MQTTError.self) { try connection.setTLS(caFile: "/nonexistent/ca.pem") }
        #expect(throws: MQTTError.self) { try connection.setMaxInflight(0) }
        #expect(throws: MQTTError.self) { try connection.publish(topic: "", payload: [], qos: 1, retain: false) }
    }
}

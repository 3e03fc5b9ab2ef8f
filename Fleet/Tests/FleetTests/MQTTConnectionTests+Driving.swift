import Foundation
import FleetTestSupport
@testable import FleetUplink
import Testing
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Driving connections in tests

/// A subscriber whose messages are collected in order.
final class Subscriber {
    let connection: MQTTConnection
    var messages: [MQTTMessage] = []
    init(_ connection: MQTTConnection) { self.connection = connection }
}

/// A connection subscribed to `topic` at QoS 1, returned once its SUBACK arrived.
func subscribed(to topic: String, broker: Mosquitto) throws -> Subscriber {
    let subscriber = Subscriber(try MQTTConnection(clientID: "subscriber-\(UUID().uuidString.prefix(8))"))
    subscriber.connection.onMessage = { [unowned subscriber] in subscriber.messages.append($0) }
    try connectAccepted(subscriber.connection, broker: broker)
    var granted: [Int32]?
    subscriber.connection.onSubscribe = { granted = $1 }
    try subscriber.connection.subscribe(topic: topic, qos: 1)
    try pump([subscriber.connection]) { granted != nil }
    guard granted == [1] else { throw ServerError("subscribing to \(topic) was granted \(granted ?? [])") }
    return subscriber
}

/// Connects `connection` to `broker` and drives it until its CONNACK accepted it.
func connectAccepted(_ connection: MQTTConnection, broker: Mosquitto) throws {
    var result: MQTTConnectResult?
    let previous = connection.onConnect
    connection.onConnect = { result = $0 }
    defer { connection.onConnect = previous }
    try connection.connect(host: "127.0.0.1", port: broker.port, keepAlive: 30)
    try pump([connection]) { result != nil }
    guard result == .accepted else { throw ServerError("connecting was answered \(String(describing: result))") }
}

/// The MQTTError `body` throws; an error of its own when it throws none.
func failure(_ body: () throws -> Void) throws -> MQTTError {
    do {
        try body()
    } catch let error as MQTTError {
        return error
    }
    throw ServerError("expected an MQTTError, got none")
}

/// Drives `connections` as the uplink does (poll, then loopRead, loopWrite, loopMisc) until `condition` holds;
/// throws what a loop call throws, or a hang guard's error after `timeout` (generous: never a measurement).
func pump(_ connections: [MQTTConnection], timeout: Duration = .seconds(60), until condition: () -> Bool) throws {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline else { throw ServerError("no outcome within \(timeout)") }
        var fds = connections.map { connection in
            pollfd(fd: connection.socket,
                   events: Int16(POLLIN) | (connection.wantsWrite ? Int16(POLLOUT) : 0), revents: 0)
        }
        guard fds.contains(where: { $0.fd >= 0 }) else { throw ServerError("no connection left to drive") }
        // poll ignores the negative descriptors of connections that have ended.
        guard poll(&fds, nfds_t(fds.count), 100) >= 0 || errno == EINTR else {
            throw ServerError("poll: \(String(cString: strerror(errno)))")
        }
        for (connection, fd) in zip(connections, fds) where fd.fd >= 0 {
            if fd.revents & Int16(POLLIN | POLLERR | POLLHUP) != 0 { try connection.loopRead() }
            if fd.revents & Int16(POLLOUT) != 0, connection.socket >= 0 { try connection.loopWrite() }
            if connection.socket >= 0 { try connection.loopMisc() }
        }
    }
}

/// Runs `body` on a thread of its own (libmosquitto's calls block; never on the cooperative pool).
func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            continuation.resume(with: Result { try body() })
        }
        thread.name = "mqtt-test"
        thread.start()
    }
}

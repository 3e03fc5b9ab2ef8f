import Foundation
package import GPSDLocation

#if canImport(Glibc)
import GPSDSystem
import Glibc
#endif

/// A loopback TCP server that greets like gpsd (its VERSION banner) and then sends what the test scripts, and
/// records what each client sent: the peer for tests of the transport (connects, commands, threads) that need
/// a socket but not a real gpsd.
///
/// ```swift
/// let gpsd = try FakeGPSD()
/// let manager = LocationManager(server: gpsd.server)
/// manager.startUpdatingLocation()
/// let client = await gpsd.nextClient()
/// await client.waitUntilReceived { $0.contains("?WATCH=") }
/// client.send(#"{"class":"TPV","mode":3,"lat":1,"lon":2}"#)
/// ```
package final class FakeGPSD: Sendable {
    /// The banner gpsd 3.22 sends first.
    package static let versionLine =
        #"{"class":"VERSION","release":"3.22","rev":"3.22","proto_major":3,"proto_minor":14}"#

    package let port: UInt16
    private let listener: Int32
    private let state = Locked(State())
    private let greeting: [String]

    private struct State {
        var clients: [Client] = []
        var taken = 0
        var waiters: [CheckedContinuation<Client, Never>] = []
        var stopped = false
    }

    /// `127.0.0.1:port`.
    package var server: GPSDServer { GPSDServer(host: "127.0.0.1", port: port) }

    /// Listens on a free loopback port; each client is sent `greeting`, a line at a time, once accepted (none:
    /// a peer that accepts and says nothing).
    package init(greeting: [String] = [FakeGPSD.versionLine]) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        guard let boundPort = bindToLoopback(fd), listen(fd, 16) == 0 else {
            let number = errno
            close(fd)
            throw POSIXError(.init(rawValue: number) ?? .EIO)
        }
        listener = fd
        port = boundPort
        self.greeting = greeting
        Thread.detachNewThread { [self] in acceptClients() }
    }

    deinit { stop() }

    /// Stops accepting and closes every connection.
    package func stop() {
        let clients = state.withLock { state -> [Client]? in
            guard !state.stopped else { return nil }
            state.stopped = true
            return state.clients
        }
        guard let clients else { return }
        shutdown(listener, Int32(SHUT_RDWR))   // ends the blocked accept
        clients.forEach { $0.close() }
    }

    /// The next client not yet handed out, once it has connected.
    package func nextClient() async -> Client {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Client? in
                if state.taken < state.clients.count {
                    state.taken += 1
                    return state.clients[state.taken - 1]
                }
                state.waiters.append(continuation)
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// How many clients have connected so far.
    package var clientCount: Int { state.withLock { $0.clients.count } }

    private func acceptClients() {
        defer { close(listener) }
        while true {
            let fd = accept(listener, nil, nil)
            if fd < 0 {
                if errno == EINTR { continue }
                return
            }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            let client = Client(fd: fd)
            for line in greeting { client.send(line) }
            let (waiter, stopped) = state.withLock { state -> (CheckedContinuation<Client, Never>?, Bool) in
                state.clients.append(client)
                guard !state.waiters.isEmpty else { return (nil, state.stopped) }
                state.taken += 1
                return (state.waiters.removeFirst(), state.stopped)
            }
            if stopped { client.close() }
            waiter?.resume(returning: client)
        }
    }

    /// One accepted connection.
    package final class Client: Sendable {
        private let fd: Int32
        private let state = Locked(ClientState())

        private struct ClientState {
            var received: [UInt8] = []
            var closed = false
            var peerClosed = false
            var waiters: [(predicate: @Sendable (String) -> Bool, continuation: CheckedContinuation<Void, Never>)] = []
        }

        init(fd: Int32) {
            self.fd = fd
            Thread.detachNewThread { [self] in readFromClient() }
        }

        deinit { Glibc.close(fd) }

        /// Sends `line` and a newline.
        package func send(_ line: String) { sendRaw(Array((line + "\n").utf8)) }

        /// Sends `bytes` one at a time, `interval` apart: a peer that trickles. Returns when all are sent.
        package func trickle(_ bytes: [UInt8], every interval: Duration) async {
            for byte in bytes {
                guard !state.withLock({ $0.closed || $0.peerClosed }) else { return }
                sendRaw([byte])
                try? await Task.sleep(for: interval)
            }
        }

        /// Sends bytes as they are (a partial line, noise).
        package func sendRaw(_ bytes: [UInt8]) {
            var rest = bytes[...]
            while !rest.isEmpty {
                let sent = rest.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if sent < 0 && errno == EINTR { continue }
                guard sent > 0 else { return }
                rest = rest.dropFirst(sent)
            }
        }

        /// What the client has sent so far.
        package var received: String { state.withLock { String(decoding: $0.received, as: UTF8.self) } }

        /// Whether the client has closed its end.
        package var hasHungUp: Bool { state.withLock { $0.peerClosed } }

        /// Returns once what the client sent satisfies `predicate`, or it has hung up.
        package func waitUntilReceived(_ predicate: @escaping @Sendable (String) -> Bool) async {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Bool in
                    if state.peerClosed || predicate(String(decoding: state.received, as: UTF8.self)) { return true }
                    state.waiters.append((predicate, continuation))
                    return false
                }
                if ready { continuation.resume() }
            }
        }

        /// Returns once the client has closed its end of the connection.
        package func waitForHangUp() async { await waitUntilReceived { _ in false } }

        /// Closes the connection (gpsd going away).
        package func close() {
            let first = state.withLock { state in
                defer { state.closed = true }
                return !state.closed
            }
            if first { shutdown(fd, Int32(SHUT_RDWR)) }
        }

        private func readFromClient() {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                    if count > 0 { state.received += buffer[..<count] } else { state.peerClosed = true }
                    let text = String(decoding: state.received, as: UTF8.self)
                    let ready = state.waiters.filter { state.peerClosed || $0.predicate(text) }
                    state.waiters.removeAll { state.peerClosed || $0.predicate(text) }
                    return ready.map(\.continuation)
                }
                ready.forEach { $0.resume() }
                if count <= 0 { break }
            }
        }
    }
}

/// A loopback port where connections are never completed: a listener whose queue of pending connections is
/// full and that accepts none, so a client's SYN goes unanswered, as with a host that drops packets.
package final class UnansweredPort: Sendable {
    package let port: UInt16
    private let descriptors: [Int32]

    package var server: GPSDServer { GPSDServer(host: "127.0.0.1", port: port) }

    package init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        guard let boundPort = bindToLoopback(listener), listen(listener, 0) == 0 else {
            close(listener)
            throw POSIXError(.EADDRINUSE)
        }
        port = boundPort
        // Fill the queue: connections that complete at once take its places; the first that stays in progress
        // shows it is full.
        var fillers: [Int32] = []
        for _ in 0..<8 {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { break }
            fillers.append(fd)
            if connectToLoopback(fd, port: boundPort) != 0 && errno == EINPROGRESS {
                var writable = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                if poll(&writable, 1, 200) == 0 { break }   // not completed: the queue is full
            }
        }
        descriptors = [listener] + fillers
    }

    deinit { descriptors.forEach { close($0) } }
}

import Glibc
import GPSDSystem

/// Reports from a live gpsd, on a thread of its own per session.
///
/// Each session connects (``GPSDConnection``), starts a JSON watch, waits for gpsd's greeting (its VERSION, the
/// first line gpsd sends: a peer whose first line is not gpsd's JSON is not gpsd, and one that says nothing has
/// not connected, ``GPSDConnection/awaitGreeting(afterSending:wake:timeout:isClosed:)``), and then waits in poll(2) on the
/// socket and its wake pipe: it reads what gpsd sends, and ``ReportReader`` frames the lines and parses each with
/// libgps. The session connects (``SourceEvent/connected``) when gpsd has greeted it.
/// Closing the session interrupts the wait (or the connect) at once; a host name lookup cannot be interrupted,
/// and a session closed during one lets its thread end by itself when the lookup returns.
package final class GPSDSessionSource: LocationSource {
    let server: GPSDServer
    /// How long each address may take to take the connection, and gpsd to greet it then.
    let connectTimeout: Duration
    let resources: SessionResources

    package init(
        server: GPSDServer, connectTimeout: Duration = GPSDServer.defaultConnectTimeout,
        resources: SessionResources = .system
    ) {
        self.server = server
        self.connectTimeout = connectTimeout.asTimeout
        self.resources = resources
    }

    package func openSession(_ handler: @escaping @Sendable ([SourceEvent]) -> Void) throws(LocationError) -> any SourceSession {
        let (server, timeout) = (server, connectTimeout)
        return try ReportReader.start(
            name: "gpsd:\(server.port)", resources: resources, to: handler
        ) { reader throws(LocationError) in
            try GPSDBytes(watching: server, connectTimeout: timeout, on: reader)
        }
    }
}

/// What gpsd sends on a watching connection, read as it comes; between reads, the POLLs the manager asks for
/// (``ReaderThread/requestHeldFix()``) go out.
private struct GPSDBytes: ByteSource {
    static let chunkSize = 16 * 1024
    let connection: GPSDConnection
    let reader: ReaderThread
    /// What came with gpsd's greeting (the greeting first), not yet read.
    private var greeting: ArraySlice<UInt8>

    /// Connects to `server`, starts a JSON watch and waits for gpsd's greeting; `nil` if the session was closed
    /// meanwhile.
    init?(watching server: GPSDServer, connectTimeout: Duration, on reader: ReaderThread) throws(LocationError) {
        guard let addresses = try reader.uninterruptible({ GPSDConnection.addresses(of: server) })?.get(),
              let connection = try GPSDConnection.connect(
                  to: server, at: addresses, wake: reader.wake, timeout: connectTimeout, isClosed: { reader.isClosed })
        else { return nil }
        guard let greeting = try connection.awaitGreeting(
            afterSending: GPSDCommand.watch(device: server.device), wake: reader.wake, timeout: connectTimeout,
            isClosed: { reader.isClosed })
        else { return nil }
        (self.connection, self.reader, self.greeting) = (connection, reader, greeting[...])
    }

    mutating func read(into buffer: inout [UInt8]) throws(LocationError) -> Int? {
        if !greeting.isEmpty {
            let count = min(greeting.count, buffer.count)
            buffer.replaceSubrange(0..<count, with: greeting.prefix(count))
            greeting = greeting.dropFirst(count)
            return count
        }
        if reader.takeHeldFixRequest() {
            try connection.send(GPSDCommand.poll, wake: reader.wake) { reader.isClosed }
        }
        do throws(SystemError) {
            guard try reader.wake.wait(for: connection.socket, timeout: nil) else { return nil }
            return try Syscall.read(connection.socket, into: &buffer)
        } catch {
            throw error.locationError(.connectionLost, "connection to gpsd at \(connection.server) lost")
        }
    }

    /// gpsd closed the connection.
    func end(afterReports reports: Int) -> SourceEvent {
        .failed(LocationError(.connectionLost, "connection to gpsd at \(connection.server) lost: gpsd closed the connection"))
    }
}

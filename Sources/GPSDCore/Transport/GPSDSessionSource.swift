import Glibc
import GPSDSystem

/// Reports from a live gpsd, on a thread of its own per session.
///
/// Each session connects (``GPSDConnection``), starts a JSON watch, and then waits in poll(2) on the socket and
/// its wake pipe: it reads what gpsd sends, and ``ReportReader`` frames the lines and parses each with libgps.
/// Closing the session interrupts the wait (or the connect) at once; a host name lookup cannot be interrupted,
/// and a session closed during one lets its thread end by itself when the lookup returns.
package final class GPSDSessionSource: LocationSource {
    let server: GPSDServer
    /// How long each address may take to take the connection.
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

    /// Connects to `server` and starts a JSON watch; `nil` if the session was closed meanwhile.
    init?(watching server: GPSDServer, connectTimeout: Duration, on reader: ReaderThread) throws(LocationError) {
        guard let addresses = try reader.uninterruptible({ GPSDConnection.addresses(of: server) })?.get(),
              let connection = try GPSDConnection.connect(
                  to: server, at: addresses, wake: reader.wake, timeout: connectTimeout, isClosed: { reader.isClosed })
        else { return nil }
        try connection.send(GPSDCommand.watch(device: server.device), wake: reader.wake) { reader.isClosed }
        (self.connection, self.reader) = (connection, reader)
    }

    func read(into buffer: inout [UInt8]) throws(LocationError) -> Int? {
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

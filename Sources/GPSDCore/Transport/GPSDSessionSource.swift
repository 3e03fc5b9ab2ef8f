import Glibc
import GPSDSystem

/// Reports from a live gpsd, on a thread of its own per session.
///
/// Each session connects (``GPSDConnection``), starts a JSON watch, and then waits in poll(2) on the socket and
/// its wake pipe: it reads what gpsd sends, frames lines itself and parses each with libgps (``ReportDecoder``).
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
        return try ReaderThread.start(name: "gpsd:\(server.port)", resources: resources) { reader in
            Self.read(from: server, connectTimeout: timeout, on: reader, to: handler)
        }
    }

    private static func read(
        from server: GPSDServer, connectTimeout: Duration, on reader: ReaderThread, to handler: @Sendable ([SourceEvent]) -> Void
    ) {
        /// The events of the read under way, handed on together when it has been framed.
        var batch: [SourceEvent] = []
        func flush() {
            guard !batch.isEmpty else { return }
            if !reader.isClosed { handler(batch) }
            batch.removeAll(keepingCapacity: true)
        }
        func fail(_ error: LocationError) {
            batch.append(.failed(error))
            flush()
        }
        let decoder: ReportDecoder
        let connection: GPSDConnection
        do throws(LocationError) {
            decoder = try ReportDecoder()
            guard let addresses = try reader.uninterruptible({ GPSDConnection.addresses(of: server) })?.get(),
                  let made = try GPSDConnection.connect(
                      to: server, at: addresses, wake: reader.wake, timeout: connectTimeout, isClosed: { reader.isClosed })
            else { return }
            connection = made
            try connection.send(GPSDCommand.watch(device: server.device), wake: reader.wake) { reader.isClosed }
        } catch {
            return fail(error)
        }
        handler([.connected])

        /// Hands one line on, with what was found in it that cannot be true.
        func deliver(_ line: ArraySlice<UInt8>) {
            guard !reader.isClosed else { return }
            let report = decoder.decode(line)
            for problem in decoder.problems { batch.append(.rejected(problem)) }
            batch.append(report.map(SourceEvent.report) ?? .skippedLine)
        }

        var splitter = LineSplitter()
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while !reader.isClosed {
            do throws(LocationError) {
                if reader.takeHeldFixRequest() {
                    try connection.send(GPSDCommand.poll, wake: reader.wake) { reader.isClosed }
                }
                let count: Int?
                do throws(SystemError) {
                    guard try reader.wake.wait(for: connection.socket, timeout: nil) else { continue }
                    count = try Syscall.read(connection.socket, into: &buffer)
                } catch {
                    throw error.locationError(.connectionLost, "connection to gpsd at \(server) lost")
                }
                guard let count else { continue }
                if count == 0 {
                    // Everything read before the end is delivered first, a last line without its newline too.
                    splitter.finish(line: deliver, skipped: { batch.append(.skippedLine) })
                    throw LocationError(.connectionLost, "connection to gpsd at \(server) lost: gpsd closed the connection")
                }
                buffer.withUnsafeBytes { bytes in
                    splitter.append(UnsafeRawBufferPointer(rebasing: bytes[0..<count]), line: deliver,
                                    skipped: { batch.append(.skippedLine) })
                }
                flush()
            } catch {
                return fail(error)
            }
        }
    }
}

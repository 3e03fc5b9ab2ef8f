import Foundation
import Glibc

/// Reports from a live gpsd, through libgps, on a thread of its own.
///
/// libgps opens the connection (`gps_open`), starts the watch (`gps_stream`), sends commands (`gps_send`) and
/// parses every line (`gps_unpack`); the thread frames lines itself and waits in poll(2) on the socket and a
/// wake pipe, so `stop()` takes effect at once, a POLL reply is seen whole, and end of file is unambiguous.
final class GPSDSessionSource: LocationSource {
    let server: GPSDServer
    private let thread: SourceThread

    init(server: GPSDServer) {
        self.server = server
        self.thread = SourceThread(name: "GPSDLocation gpsd \(server)")
    }

    func start(_ handler: @escaping @Sendable (SourceEvent) -> Void) {
        let server = server
        thread.start { run in Self.runLoop(server: server, run: run, handler: handler) }
    }

    func stop() { thread.stop() }

    func poll() { thread.requestPoll() }

    private static func runLoop(server: GPSDServer, run: SourceThread.Run, handler: @Sendable (SourceEvent) -> Void) {
        let connection: LibGPSConnection
        do {
            connection = try LibGPSConnection(server: server)
        } catch {
            if !run.isStopped { handler(.failed(error)) }
            return
        }
        defer { connection.close() }
        let decoder = ReportDecoder()
        var splitter = LineSplitter()
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        let fd = connection.fileDescriptor

        func lost(_ reason: String) {
            if !run.isStopped {
                handler(.failed(LocationError(.connectionLost, "connection to gpsd at \(server) lost: \(reason)")))
            }
        }

        while !run.isStopped {
            if run.takePollRequest() {
                guard connection.send("?POLL;") else { return lost("sending ?POLL; failed") }
            }
            guard run.wake.wait(readable: fd, timeout: nil) else { continue }
            let count = read(fd, &buffer, buffer.count)
            if count == 0 { return lost("gpsd closed the connection") }
            if count < 0 {
                if errno == EAGAIN || errno == EINTR { continue }
                return lost(String(cString: strerror(errno)))
            }
            buffer.withUnsafeBytes { bytes in
                splitter.append(
                    UnsafeRawBufferPointer(rebasing: bytes[0..<count]),
                    line: { line in
                        guard !run.isStopped else { return }
                        handler(decoder.decode(line).map(SourceEvent.report) ?? .skippedLine)
                    },
                    skipped: { handler(.skippedLine) })
            }
        }
    }
}

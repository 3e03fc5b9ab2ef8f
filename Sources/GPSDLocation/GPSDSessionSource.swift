import Foundation
import Glibc
import Synchronization

/// Reports from a live gpsd, through libgps, on a thread of its own.
///
/// libgps opens the connection (`gps_open`), starts the watch (`gps_stream`), sends commands (`gps_send`) and
/// parses every line (`gps_unpack`); the thread frames lines itself and waits in poll(2) on the socket and a
/// wake pipe, so `stop()` takes effect at once, a POLL reply is seen whole, and end of file is unambiguous.
final class GPSDSessionSource: LocationSource {
    let server: GPSDServer
    private let current = Locked<Run?>(nil)

    init(server: GPSDServer) { self.server = server }

    /// One connection's life: created by `start`, ended by `stop` or by the connection failing.
    private final class Run: Sendable {
        let wake = WakePipe()
        let stopped = Atomic(false)
        let pollRequested = Atomic(false)
    }

    func start(_ handler: @escaping @Sendable (SourceEvent) -> Void) {
        let run = Run()
        let previous = current.withLock { current in
            defer { current = run }
            return current
        }
        previous.map(Self.end)
        let server = server
        let thread = Thread { Self.runLoop(server: server, run: run, handler: handler) }
        thread.name = "GPSDLocation gpsd \(server)"
        thread.start()
    }

    func stop() {
        current.withLock { current in
            defer { current = nil }
            return current
        }.map(Self.end)
    }

    func poll() {
        guard let run = current.withLock({ $0 }) else { return }
        run.pollRequested.store(true, ordering: .releasing)
        run.wake.signal()
    }

    private static func end(_ run: Run) {
        run.stopped.store(true, ordering: .releasing)
        run.wake.signal()
    }

    private static func runLoop(server: GPSDServer, run: Run, handler: @Sendable (SourceEvent) -> Void) {
        let connection: LibGPSConnection
        do {
            connection = try LibGPSConnection(server: server)
        } catch {
            if !run.stopped.load(ordering: .acquiring) { handler(.failed(error)) }
            return
        }
        defer { connection.close() }
        let decoder = ReportDecoder()
        var splitter = LineSplitter()
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        let fd = connection.fileDescriptor

        func lost(_ reason: String) {
            if !run.stopped.load(ordering: .acquiring) {
                handler(.failed(LocationError(.connectionLost, "connection to gpsd at \(server) lost: \(reason)")))
            }
        }

        while !run.stopped.load(ordering: .acquiring) {
            if run.pollRequested.exchange(false, ordering: .acquiringAndReleasing) {
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
                        guard !run.stopped.load(ordering: .relaxed) else { return }
                        handler(decoder.decode(line).map(SourceEvent.report) ?? .skippedLine)
                    },
                    skipped: { handler(.skippedLine) })
            }
        }
    }
}

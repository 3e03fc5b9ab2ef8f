import Foundation

/// Replays a recording: a file of gpsd JSON reports, one per line, as `gpspipe -w` writes them. Each line is
/// parsed by libgps (``ReportDecoder``); lines that are not reports are skipped and counted. Each session reads
/// the file from its start, on a thread of its own, paced by ``ReplayPacer``.
final class RecordingSource: LocationSource {
    let url: URL
    let pace: ReplayPace
    let resources: SessionResources

    init(url: URL, pace: ReplayPace, resources: SessionResources = .system) {
        self.url = url
        self.pace = pace
        self.resources = resources
    }

    func openSession(_ handler: @escaping @Sendable (SourceEvent) -> Void) throws(LocationError) -> any SourceSession {
        let (url, pace) = (url, pace)
        return try ReaderThread.start(name: "replay", resources: resources) { reader in Self.replay(url, pace: pace, on: reader, to: handler) }
    }

    private static func replay(_ url: URL, pace: ReplayPace, on reader: ReaderThread, to handler: @Sendable (SourceEvent) -> Void) {
        let file: Int32
        let decoder: ReportDecoder
        do throws(LocationError) {
            decoder = try ReportDecoder()
            do {
                file = try Syscall.openForReading(url.path)
            } catch {
                throw error.locationError(.invalidRecording, "cannot read recording \(url.path)")
            }
        } catch {
            return handler(.failed(error))
        }
        defer { Syscall.close(file) }
        handler(.connected)

        var reports = 0
        var pacer = ReplayPacer(pace: pace)
        let clock = SystemManagerClock()
        var splitter = LineSplitter()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        /// Hands one line on, after its pause; false once the session is closed.
        func deliver(_ line: ArraySlice<UInt8>) -> Bool {
            guard !reader.isClosed else { return false }
            let decoded = decoder.decode(line)
            for problem in decoder.problems { handler(.rejected(problem)) }
            guard let report = decoded else {
                handler(.skippedLine)
                return true
            }
            reports += 1
            if let delay = pacer.delay(before: report, now: clock.now) {
                // Sleep until the report's time, whatever else wakes the pipe; only closing cuts it short.
                let deadline = clock.now + delay
                do throws(SystemError) {
                    while !reader.isClosed, case let left = deadline - clock.now, left > .zero {
                        _ = try reader.wake.wait(for: nil, timeout: left)
                    }
                } catch {
                    handler(.failed(error.locationError(.resourceUnavailable, "cannot pace the replay of \(url.path)")))
                    return false
                }
                if reader.isClosed { return false }
            }
            handler(.report(report))
            return true
        }

        while !reader.isClosed {
            let count: Int
            do throws(SystemError) {
                count = try Syscall.read(file, into: &buffer) ?? 0
            } catch {
                return handler(.failed(error.locationError(.invalidRecording, "cannot read recording \(url.path)")))
            }
            var open = true
            if count == 0 {
                splitter.finish(line: { open = open && deliver($0) }, skipped: { handler(.skippedLine) })
            } else {
                buffer.withUnsafeBytes { bytes in
                    splitter.append(UnsafeRawBufferPointer(rebasing: bytes[0..<count]),
                                    line: { open = open && deliver($0) }, skipped: { handler(.skippedLine) })
                }
            }
            guard open else { return }
            if count == 0 { break }
        }
        guard !reader.isClosed else { return }
        if reports == 0 {
            handler(.failed(LocationError(.invalidRecording, "no gpsd reports in recording \(url.path)")))
        } else {
            handler(.finished)
        }
    }
}

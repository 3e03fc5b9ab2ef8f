package import FoundationEssentials
import GPSDSystem

/// What a ``RecordingSource`` replays: a file, or its contents in memory (a recording built into a program).
package enum Recording: Sendable {
    case file(URL)
    case contents([UInt8], name: String)

    /// How messages name it: the file's path, or the name given.
    var name: String {
        switch self {
        case .file(let url): url.path
        case .contents(_, let name): name
        }
    }
}

/// Replays a recording: gpsd JSON reports, one per line, as `gpspipe -w` writes them. Each line is parsed by
/// libgps (``ReportDecoder``); lines that are not reports are skipped and counted. Each session reads the
/// recording from its start, on a thread of its own, paced by ``ReplayPacer``.
package final class RecordingSource: LocationSource {
    let recording: Recording
    let pace: ReplayPace
    let resources: SessionResources

    package init(_ recording: Recording, pace: ReplayPace, resources: SessionResources = .system) {
        self.recording = recording
        self.pace = pace
        self.resources = resources
    }

    package convenience init(url: URL, pace: ReplayPace, resources: SessionResources = .system) {
        self.init(.file(url), pace: pace, resources: resources)
    }

    package func openSession(_ handler: @escaping @Sendable ([SourceEvent]) -> Void) throws(LocationError) -> any SourceSession {
        let (recording, pace) = (recording, pace)
        return try ReaderThread.start(name: "replay", resources: resources) { reader in
            Self.replay(recording, pace: pace, on: reader, to: handler)
        }
    }

    private static func replay(
        _ recording: Recording, pace: ReplayPace, on reader: ReaderThread, to handlerOfBatches: @Sendable ([SourceEvent]) -> Void
    ) {
        /// The events of the chunk under way: handed on together when it has been framed, or before a pause.
        var batch: [SourceEvent] = []
        func flush() {
            guard !batch.isEmpty else { return }
            handlerOfBatches(batch)
            batch.removeAll(keepingCapacity: true)
        }
        func handler(_ event: SourceEvent) {
            batch.append(event)
            if case .report = event { return }
            if case .rejected = event { return }
            if case .skippedLine = event { return }
            flush()   // the start and the end of the session go at once
        }
        let name = recording.name
        var file: Int32?
        let decoder: ReportDecoder
        do throws(LocationError) {
            decoder = try ReportDecoder()
            if case .file(let url) = recording {
                do {
                    file = try Syscall.openForReading(url.path)
                } catch {
                    throw error.locationError(.invalidRecording, "cannot read recording \(name)")
                }
            }
        } catch {
            return handler(.failed(error))
        }
        defer { if let file { Syscall.close(file) } }
        handler(.connected)
        var offset = 0
        /// The next bytes of the recording into `buffer`: how many, 0 at its end.
        func read(into buffer: inout [UInt8]) throws(SystemError) -> Int {
            switch (recording, file) {
            case (.contents(let bytes, _), _):
                let count = min(buffer.count, bytes.count - offset)
                buffer.replaceSubrange(0..<count, with: bytes[offset..<offset + count])
                offset += count
                return count
            case (.file, let file?):
                return try Syscall.read(file, into: &buffer) ?? 0
            case (.file, nil):
                return 0
            }
        }

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
                flush()   // what came before the pause is due now
                // Sleep until the report's time, whatever else wakes the pipe; only closing cuts it short.
                let deadline = clock.now + delay
                do throws(SystemError) {
                    while !reader.isClosed, case let left = deadline - clock.now, left > .zero {
                        _ = try reader.wake.wait(for: nil, timeout: left)
                    }
                } catch {
                    handler(.failed(error.locationError(.resourceUnavailable, "cannot pace the replay of \(name)")))
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
                count = try read(into: &buffer)
            } catch {
                return handler(.failed(error.locationError(.invalidRecording, "cannot read recording \(name)")))
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
            guard open, !reader.isClosed else { return }
            flush()
            if count == 0 { break }
        }
        guard !reader.isClosed else { return }
        if reports == 0 {
            handler(.failed(LocationError(.invalidRecording, "no gpsd reports in recording \(name)")))
        } else {
            handler(.finished)
        }
    }
}

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
/// recording from its start, on a thread of its own (``ReportReader``), paced by ``ReplayPacer`` and held back
/// by its slowest consumer (``ReplayBackpressure``).
package final class RecordingSource: LocationSource {
    let recording: Recording
    let pace: ReplayPace
    let resources: SessionResources
    package let backpressure: ReplayBackpressure?

    /// - Parameter backlogLimit: how many events a consumer may have not taken before the replay waits for it.
    package init(
        _ recording: Recording, pace: ReplayPace, resources: SessionResources = .system,
        backlogLimit: Int = ReplayBackpressure.defaultLimit
    ) {
        self.recording = recording
        self.pace = pace
        self.resources = resources
        self.backpressure = ReplayBackpressure(limit: backlogLimit)
    }

    package convenience init(url: URL, pace: ReplayPace, resources: SessionResources = .system) {
        self.init(.file(url), pace: pace, resources: resources)
    }

    package func openSession(_ handler: @escaping @Sendable ([SourceEvent]) -> Void) throws(LocationError) -> any SourceSession {
        let (recording, pace, backpressure) = (recording, pace, backpressure)
        return try ReportReader.start(name: "replay", resources: resources, to: handler) {
            reader throws(LocationError) in
            try RecordingBytes(opening: recording, pace: pace, backpressure: backpressure, on: reader)
        }
    }
}

/// A recording's bytes, from its start, each report handed on at its recorded time (``ReplayPacer``) once no
/// consumer is behind (``ReplayBackpressure``). The session ends with ``SourceEvent/finished``, or as an
/// ``LocationError/Code/invalidRecording`` if the recording held no report.
private struct RecordingBytes: ByteSource {
    static let chunkSize = 64 * 1024
    /// The bytes in memory, or the file open for reading.
    private let input: Input
    /// How far into the bytes in memory the replay has read.
    private var offset = 0
    private let name: String
    private var pacer: ReplayPacer
    private let backpressure: ReplayBackpressure?
    private let origin = ContinuousClock.now
    private let reader: ReaderThread

    private enum Input {
        case contents([UInt8])
        case file(OpenFile)
    }

    /// - Throws: ``LocationError/Code/invalidRecording`` if the file cannot be opened.
    init(
        opening recording: Recording, pace: ReplayPace, backpressure: ReplayBackpressure?, on reader: ReaderThread
    ) throws(LocationError) {
        name = recording.name
        switch recording {
        case .contents(let bytes, _):
            input = .contents(bytes)
        case .file(let url):
            do throws(SystemError) {
                input = .file(try OpenFile(url.path))
            } catch {
                throw error.locationError(.invalidRecording, "cannot read recording \(name)")
            }
        }
        pacer = ReplayPacer(pace: pace)
        self.backpressure = backpressure
        self.reader = reader
    }

    /// Monotonic time since the replay began, which ``ReplayPacer`` counts in.
    private var now: Duration { origin.duration(to: .now) }

    mutating func read(into buffer: inout [UInt8]) throws(LocationError) -> Int? {
        switch input {
        case .contents(let bytes):
            let count = min(buffer.count, bytes.count - offset)
            buffer.replaceSubrange(0..<count, with: bytes[offset..<offset + count])
            offset += count
            return count
        case .file(let file):
            do throws(SystemError) {
                return try Syscall.read(file.descriptor, into: &buffer) ?? 0
            } catch {
                throw error.locationError(.invalidRecording, "cannot read recording \(name)")
            }
        }
    }

    /// Sleeps until the report's time, whatever else wakes the session's pipe, then waits while a consumer is
    /// behind; only closing cuts either short.
    mutating func pause(before report: GPSDReport, flushing flush: () -> Void) throws(LocationError) {
        do throws(SystemError) {
            if let delay = pacer.delay(before: report, now: now) {
                flush()   // what came before the pause is due now
                let deadline = now + delay
                while !reader.isClosed, case let left = deadline - now, left > .zero {
                    _ = try reader.wake.wait(for: nil, timeout: left)
                }
            }
            try backpressure?.waitForConsumers(on: reader, flushing: flush)
        } catch {
            throw error.locationError(.resourceUnavailable, "cannot pace the replay of \(name)")
        }
    }

    func end(afterReports reports: Int) -> SourceEvent {
        reports == 0 ? .failed(LocationError(.invalidRecording, "no gpsd reports in recording \(name)")) : .finished
    }
}

/// A file open for reading, closed when it goes.
private final class OpenFile {
    let descriptor: Int32

    init(_ path: String) throws(SystemError) { descriptor = try Syscall.openForReading(path) }

    deinit { Syscall.close(descriptor) }
}

import Synchronization
@testable import GPSDCore
@testable import GPSDLocation
import Testing

/// The loop that live sessions and replays share, on a scripted byte source: what each read's call to the handler
/// carries, how a session begins and ends, and what a pause does. Each test waits for the session's thread to end.
@Suite("ReportReader", .timeLimit(.minutes(1)))
struct ReportReaderTests {
    private static let tpv = #"{"class":"TPV","device":"/dev/ttyUSB0","mode":2,"time":"2025-06-01T12:00:01.000Z","#
        + #""lat":52.5,"lon":13.25}"#
    /// A TPV whose speed cannot be true: the speed is left out, and the fix kept.
    private static let tooFast = #"{"class":"TPV","mode":2,"time":"2025-06-01T12:00:00.000Z","lat":52.5,"lon":13.25,"speed":99999.0}"#
    private static let failure = LocationError(.connectionLost, "scripted failure")

    /// What a test's source does at each read, in turn; after the last, the bytes end.
    private enum Step {
        case bytes(String)
        case nothing
        case failure
    }

    private struct ScriptedBytes: ByteSource {
        static let chunkSize = 64 * 1024
        var steps: [Step]
        /// The report (counted from 1) whose pause flushes, then fails.
        var failingPause: Int?
        private var pauses = 0

        init(_ steps: [Step], failingPause: Int? = nil) {
            self.steps = steps
            self.failingPause = failingPause
        }

        mutating func read(into buffer: inout [UInt8]) throws(LocationError) -> Int? {
            guard !steps.isEmpty else { return 0 }
            switch steps.removeFirst() {
            case .bytes(let text):
                let bytes = Array(text.utf8)
                buffer.replaceSubrange(0..<bytes.count, with: bytes)
                return bytes.count
            case .nothing: return nil
            case .failure: throw ReportReaderTests.failure
            }
        }

        mutating func pause(before report: GPSDReport, flushing flush: () -> Void) throws(LocationError) {
            pauses += 1
            guard pauses == failingPause else { return }
            flush()
            throw LocationError(.resourceUnavailable, "scripted pause")
        }

        func end(afterReports reports: Int) -> SourceEvent {
            reports == 0 ? .failed(LocationError(.invalidRecording, "no reports")) : .finished
        }
    }

    /// The calls a session made to its handler, each as the list of its events in short.
    private final class Calls: Sendable {
        private let calls = Mutex<[[String]]>([])

        func record(_ events: [SourceEvent]) {
            let names = events.map { event -> String in
                switch event {
                case .connected: "connected"
                case .report(.fix): "fix"
                case .report: "report"
                case .rejected(let problem): "rejected \(problem.kind)"
                case .skippedLine: "skipped"
                case .failed(let error): "failed \(error.code)"
                case .finished: "finished"
                }
            }
            calls.withLock { $0.append(names) }
        }

        var all: [[String]] { calls.withLock { $0 } }
    }

    /// Runs a session on `source` to its end and returns its handler's calls.
    private func calls(of source: @escaping @Sendable () throws(LocationError) -> ScriptedBytes?) async throws -> [[String]] {
        let calls = Calls()
        let reader = try ReportReader.start(name: "test", resources: .system, to: calls.record) { _ throws(LocationError) in
            try source()
        }
        while !reader.hasFinished, !Task.isCancelled { await Task.yield() }
        reader.close()
        return calls.all
    }

    @Test func eachReadIsOneCallAndTheEndComesWithTheLastRead() async throws {
        let calls = try await calls {
            ScriptedBytes([
                .bytes(Self.tpv + "\n" + Self.tpv + "\n"),
                .nothing,
                .bytes("garbage\n" + Self.tpv.prefix(20)),
                .bytes(String(Self.tpv.dropFirst(20)) + "\n\r\n"),
                .bytes(Self.tpv),   // a last line without its newline
            ])
        }
        #expect(calls == [["connected"], ["fix", "fix"], ["skipped"], ["fix"], ["fix", "finished"]])
    }

    @Test func aLineOverTheLimitIsSkippedOnceAndTheNextIsRead() async throws {
        let long = String(repeating: "x", count: 40 * 1024)   // with the next chunk's, past the 64 KiB limit
        let calls = try await calls {
            ScriptedBytes([.bytes(long), .bytes(long), .bytes(long + "\n" + Self.tpv + "\n")])
        }
        #expect(calls == [["connected"], ["skipped", "fix"], ["finished"]])
    }

    @Test func whatCannotBeTrueComesBeforeItsReport() async throws {
        let calls = try await calls { ScriptedBytes([.bytes(Self.tooFast + "\n")]) }
        #expect(calls == [["connected"], ["rejected speed", "fix"], ["finished"]])
    }

    @Test func bytesWithoutReportsEndAsTheSourceSays() async throws {
        let calls = try await calls { ScriptedBytes([.bytes("hello\n{\"foo\":1}\n")]) }
        #expect(calls == [["connected"], ["skipped", "skipped"], ["failed invalid recording"]])
    }

    @Test func aFailedReadEndsTheSessionWithItsError() async throws {
        let calls = try await calls { ScriptedBytes([.bytes(Self.tpv + "\n"), .failure, .bytes(Self.tpv + "\n")]) }
        #expect(calls == [["connected"], ["fix"], ["failed connection lost"]])
    }

    @Test func aPauseHandsOnWhatCameBeforeAndAFailedOneEndsTheSession() async throws {
        let calls = try await calls {
            ScriptedBytes([.bytes("garbage\n" + Self.tpv + "\n" + Self.tpv + "\n" + Self.tpv + "\n")], failingPause: 2)
        }
        #expect(calls == [["connected"], ["skipped", "fix"], ["failed resource unavailable"]])
    }

    @Test func aSourceThatCannotOpenSendsOnlyItsFailure() async throws {
        let calls = try await calls { () throws(LocationError) in throw Self.failure }
        #expect(calls == [["failed connection lost"]])
    }

    @Test func anOpeningCutShortByACloseSendsNothing() async throws {
        let calls = try await calls { nil }
        #expect(calls.isEmpty)
    }
}

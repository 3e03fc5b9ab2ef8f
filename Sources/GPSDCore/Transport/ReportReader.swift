/// Where a ``ReportReader`` takes its bytes from, and when it hands each report on: a live gpsd's socket, read
/// as the reports come, or a recording, replayed at the pace of its recorded times. (A `SendableMetatype`: the
/// reader's loop, generic over the source, runs on the session's own thread.)
protocol ByteSource: SendableMetatype {
    /// How many bytes one ``read(into:)`` may take. The events of one read go to the handler in one call.
    static var chunkSize: Int { get }

    /// Reads the next bytes into the start of `buffer` (``chunkSize`` long): how many, 0 at the end, `nil` when
    /// none came (the wait was woken; the reader looks at whether the session is closed, and reads again).
    /// - Throws: ``LocationError`` when the bytes cannot be had: the session ends with it.
    mutating func read(into buffer: inout [UInt8]) throws(LocationError) -> Int?

    /// Waits, if `report` is not due yet, until it is, and while the consumers are behind (a replay's
    /// ``ReplayBackpressure``); `flush` first hands on the events that came before it. Closing the session cuts
    /// the wait short. A live source hands every report on at once (the default).
    /// - Throws: ``LocationError`` when the wait fails: the session ends with it.
    mutating func pause(before report: GPSDReport, flushing flush: () -> Void) throws(LocationError)

    /// The event that ends the session when the bytes have ended, after `reports` reports.
    func end(afterReports reports: Int) -> SourceEvent
}

extension ByteSource {
    func pause(before report: GPSDReport, flushing flush: () -> Void) {}
}

/// The loop of a session's thread, live or replayed: it reads bytes from a ``ByteSource``, frames them into
/// lines (``LineSplitter``), decodes each (``ReportDecoder``), and hands the events of each read on in one call,
/// so that the manager decides them under one lock and a consumer wakes once for all of them.
///
/// Each line becomes a ``SourceEvent/report(_:)``, or a ``SourceEvent/skippedLine`` (not a report, or longer
/// than ``LineSplitter/limit``), after a ``SourceEvent/rejected(_:)`` for each value found in it that cannot be
/// true. The session begins with ``SourceEvent/connected`` and ends with the source's
/// ``ByteSource/end(afterReports:)``, in the call of the last read, or with the ``SourceEvent/failed(_:)`` of
/// whatever went wrong. Once the session is closed nothing more is handed on.
enum ReportReader {
    /// Starts a session's thread, named `name`, that makes its source with `open` and reads it to its end, or
    /// until the session is closed.
    /// - Parameters:
    ///   - handler: the session's handler, which takes the events of each read together.
    ///   - open: makes the source (connects, opens the file); `nil` if the session was closed meanwhile.
    /// - Throws: ``LocationError/Code/resourceUnavailable`` if the system refuses the pipe or the thread.
    static func start<Source: ByteSource>(
        name: String, resources: SessionResources, to handler: @escaping @Sendable ([SourceEvent]) -> Void,
        opening open: @escaping @Sendable (ReaderThread) throws(LocationError) -> Source?
    ) throws(LocationError) -> ReaderThread {
        try ReaderThread.start(name: name, resources: resources) { reader in
            run(on: reader, to: handler, opening: open)
        }
    }

    /// The loop itself, on `reader`'s thread.
    private static func run<Source: ByteSource>(
        on reader: ReaderThread, to handler: @Sendable ([SourceEvent]) -> Void,
        opening open: (ReaderThread) throws(LocationError) -> Source?
    ) {
        /// The events of the read under way: handed on together when it has been framed, or before a pause.
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
        var source: Source
        do throws(LocationError) {
            decoder = try ReportDecoder()
            guard let opened = try open(reader) else { return }
            source = opened
        } catch {
            return fail(error)
        }
        batch.append(.connected)
        flush()

        var reports = 0
        /// Whether a pause failed: the session has ended, and the lines still framed are not handed on.
        var stopped = false
        func skip() { batch.append(.skippedLine) }
        /// Hands one line on, with what was found in it that cannot be true, after its pause.
        func deliver(_ line: ArraySlice<UInt8>) {
            guard !stopped, !reader.isClosed else { return }
            let decoded = decoder.decode(line)
            for problem in decoder.problems { batch.append(.rejected(problem)) }
            guard let report = decoded else { return skip() }
            reports += 1
            do throws(LocationError) {
                try source.pause(before: report, flushing: flush)
            } catch {
                stopped = true
                return fail(error)
            }
            batch.append(.report(report))
        }

        var splitter = LineSplitter()
        var buffer = [UInt8](repeating: 0, count: Source.chunkSize)
        while !reader.isClosed, !stopped {
            let count: Int?
            do throws(LocationError) {
                count = try source.read(into: &buffer)
            } catch {
                return fail(error)
            }
            guard let count else { continue }
            if count == 0 {
                // Everything read before the end is handed on with it, a last line without its newline too.
                splitter.finish(line: deliver, skipped: skip)
                guard !stopped else { return }
                batch.append(source.end(afterReports: reports))
                return flush()
            }
            buffer.withUnsafeBytes { bytes in
                splitter.append(UnsafeRawBufferPointer(rebasing: bytes[0..<count]), line: deliver, skipped: skip)
            }
            flush()
        }
    }
}

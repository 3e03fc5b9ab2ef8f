/// Something that produces gpsd reports: a live gpsd session, a recording, or a test's scripted source.
///
/// `start` begins one run and `stop` ends it; a source may be started again after it stopped. Events of one
/// run arrive serially, from any thread; the handler must not block. After `stop` returns, a source may still
/// deliver an event or two of the stopped run: ``LocationManager`` ignores those by run number.
package protocol LocationSource: Sendable {
    /// Begins producing events for `handler`.
    func start(_ handler: @escaping @Sendable (SourceEvent) -> Void)
    /// Ends the current run and releases its resources. Never blocks on I/O.
    func stop()
    /// Asks for the current fix at once (gpsd's `?POLL;`). Sources without such a thing ignore it.
    func poll()
}

/// What a ``LocationSource`` reports.
package enum SourceEvent: Sendable, Equatable {
    /// A report from gpsd.
    case report(GPSDReport)
    /// A line that was not a gpsd report (garbage, truncated, too long); skipped.
    case skippedLine
    /// The run failed and has ended.
    case failed(LocationError)
    /// The source has no more reports (the end of a recording).
    case finished
}

/// Something that produces gpsd reports: a live gpsd, a recording, or a test's scripted source.
///
/// Each ``openSession(_:)`` begins one session (a connection to gpsd, one replay) that runs until it ends by
/// itself (``SourceEvent/failed(_:)``, ``SourceEvent/finished``) or is closed. ``LocationManager`` opens and
/// closes sessions; it never has more than one open.
package protocol LocationSource: Sendable {
    /// Begins a session whose events go to `handler`: serially, from any thread, until the session ends or is
    /// closed. Each call hands on the events that came together, in order (the reports of one read, say), so
    /// that they are decided under one lock and reach a consumer with one wake-up. The handler must not block.
    /// - Throws: ``LocationError`` when the session cannot even begin (the system refused a thread or a pipe).
    func openSession(_ handler: @escaping @Sendable ([SourceEvent]) -> Void) throws(LocationError) -> any SourceSession

    /// What holds the source back while a consumer falls behind: a replay's, which waits for its consumers;
    /// `nil` for a source that cannot wait (a live gpsd), whose consumers' buffers drop what they cannot keep.
    var backpressure: ReplayBackpressure? { get }
}

extension LocationSource {
    /// Sources do not wait for their consumers unless they say so.
    package var backpressure: ReplayBackpressure? { nil }
}

/// One open session of a ``LocationSource``.
package protocol SourceSession: Sendable {
    /// Asks gpsd at once for the fix it holds (its `?POLL;` command). Sessions without such a thing ignore it.
    func requestHeldFix()
    /// Ends the session and releases what it holds. When it returns, the session's thread has ended and no
    /// further event comes. Called on that thread, it cannot wait for it: the thread ends as soon as it returns,
    /// and a later call from another thread waits for that.
    func close()
    /// Whether this is the session's own thread (where ``close()`` cannot wait for it).
    var isOnItsThread: Bool { get }
}

extension SourceSession {
    /// Sessions without a thread of their own are never on it.
    package var isOnItsThread: Bool { false }
}

/// What a ``SourceSession`` reports.
package enum SourceEvent: Sendable, Equatable {
    /// The session is connected to gpsd and watching (or a recording is open).
    case connected
    /// A report from gpsd.
    case report(GPSDReport)
    /// Something in a report cannot be true: the value, or the whole fix, was left out of the report.
    case rejected(ReportProblem)
    /// A line that was not a gpsd report (garbage, truncated, too long); skipped.
    case skippedLine
    /// The session failed and has ended.
    case failed(LocationError)
    /// The session has no more reports (the end of a recording).
    case finished
}

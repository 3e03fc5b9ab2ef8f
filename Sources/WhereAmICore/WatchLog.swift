import Logging
import GPSDSystem

/// Where the library logs during `whereami --watch`: onto the panel's ``WatchPanel/note`` row, the newest message,
/// and kept, each, for ``replay(to:)`` once the terminal is back. The default handler writes to standard error,
/// which is the terminal the panel is drawn on: its lines would land anywhere on the panel and stay there until
/// the rows under them change, and leaving the alternate screen would take them away.
struct WatchLogHandler: LogHandler {
    let screen: WatchScreen
    let kept: WatchLog
    var logLevel: Logger.Level
    var metadata: Logger.Metadata
    var metadataProvider: Logger.MetadataProvider?

    /// A handler for the panel on `screen` that logs what `logger` logs, at its level and with its metadata.
    init(for logger: Logger, screen: WatchScreen, keeping kept: WatchLog) {
        self.screen = screen
        self.kept = kept
        logLevel = logger.logLevel
        metadata = logger.handler.metadata
        metadataProvider = logger.handler.metadataProvider
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let text = "\(event.level): \(event.message)"
        screen.update { $0.note = text }
        kept.keep(event)
    }
}

/// The messages logged during a watch, the first ``limit`` of them (the library logs each kind of problem once),
/// and how many more there were.
final class WatchLog: Sendable {
    static let limit = 100
    private let events = Locked<(kept: [LogEvent], dropped: Int)>(([], 0))

    func keep(_ event: LogEvent) {
        events.withLock { events in
            if events.kept.count < Self.limit { events.kept.append(event) } else { events.dropped += 1 }
        }
    }

    /// Passes each message kept to `logger`'s handler, in order, as it would have had it (standard error, once
    /// the terminal is back), and says how many were not kept.
    func replay(to logger: Logger) {
        let (kept, dropped) = events.withLock { $0 }
        for event in kept { logger.handler.log(event: event) }
        if dropped > 0 { logger.notice("\(dropped) more messages logged during the watch were not kept") }
    }
}

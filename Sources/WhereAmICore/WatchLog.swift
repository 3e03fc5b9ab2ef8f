import Logging
import Synchronization

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

/// The messages logged during a watch, the first ``limit`` of them (the library logs each kind of problem once).
final class WatchLog: Sendable {
    static let limit = 100
    private let events = Mutex<[LogEvent]>([])

    func keep(_ event: LogEvent) {
        events.withLock { if $0.count < Self.limit { $0.append(event) } }
    }

    /// Logs each message kept to `logger`, in order: standard error, once the terminal is back.
    func replay(to logger: Logger) {
        for event in events.withLock({ $0 }) {
            logger.log(level: event.level, event.message, metadata: event.metadata, source: event.source,
                       file: event.file, function: event.function, line: event.line)
        }
    }
}

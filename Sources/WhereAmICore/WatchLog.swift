import Logging

/// Where the library logs during `whereami --watch`: onto the panel's ``WatchPanel/note`` row. The default
/// handler writes to standard error, which is the terminal the panel is drawn on: its lines would land anywhere
/// on the panel and stay there until the rows under them change.
struct WatchLogHandler: LogHandler {
    let screen: WatchScreen
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let text = "\(event.level): \(event.message)"
        screen.update { $0.note = text }
    }
}

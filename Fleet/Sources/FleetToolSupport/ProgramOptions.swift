public import ArgumentParser
public import Logging
import UnixSignals

/// What both programs set up alike: `--metrics-file`, logging to standard error, and the signals that stop them.
///
/// ```swift
/// @OptionGroup var program: ProgramOptions
/// let (logger, metrics) = try program.bootstrap(label: "fleet-ingest")
/// group.addTask { await untilStopSignal(logger: logger) }
/// ```
public struct ProgramOptions: ParsableArguments {
    @Option(help: ArgumentHelp("""
        Write this program's health (swift-metrics) in Prometheus's text format to this file every 5 s, for \
        node_exporter's textfile collector
        """, valueName: "file"))
    public var metricsFile: String?

    public init() {}

    /// Bootstraps logging (standard error, `info` and above) and, with `--metrics-file`, swift-prometheus as the
    /// metrics backend; once per process. Returns the program's logger and its metrics file.
    public func bootstrap(label: String) throws -> (logger: Logger, metrics: MetricsFile?) {
        LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        var logger = Logger(label: label)
        logger.logLevel = .info
        return (logger, try metricsFile.map { try MetricsFile.bootstrap(path: $0) })
    }
}

/// Returns at the first SIGINT or SIGTERM, which it logs: the task of a program's task group that ends it.
public func untilStopSignal(logger: Logger) async {
    for await signal in await UnixSignalsSequence(trapping: .sigint, .sigterm) {
        logger.info("signal \(signal): stopping")
        return
    }
}

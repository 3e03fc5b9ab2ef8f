import CoreMetrics
import Foundation
import Prometheus

#if canImport(Glibc)
import Glibc
#endif

/// A program's swift-metrics written to a file in Prometheus's text format, for node_exporter's textfile collector
/// (or `cat`): the program bootstraps swift-prometheus as its backend (a library never does), and the file is
/// replaced whole at each write, so a reader never sees half of it.
///
/// ```swift
/// let metrics = try MetricsFile.bootstrap(path: "/var/lib/node_exporter/fleet_uplink.prom")
/// // … make the uplink, which reports through MetricsSystem.factory …
/// try await metrics.run(every: .seconds(5))   // until cancelled; writes once more at the end
/// ```
public final class MetricsFile: Sendable {
    /// Where it writes.
    public let path: String
    private let registry: PrometheusCollectorRegistry

    private init(path: String, registry: PrometheusCollectorRegistry) {
        self.path = path
        self.registry = registry
    }

    /// Bootstraps swift-metrics with a swift-prometheus registry that this file is written from. Once per process,
    /// before anything makes its metrics. Throws when `path`'s directory cannot be written to.
    public static func bootstrap(path: String) throws -> MetricsFile {
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        let file = MetricsFile(path: path, registry: registry)
        try file.write()
        return file
    }

    /// Writes every metric now: to `PATH.tmp`, then renamed over `PATH`.
    public func write() throws {
        let temporary = path + ".tmp"
        try Data(registry.emitToString().utf8).write(to: URL(fileURLWithPath: temporary))
        guard rename(temporary, path) == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
        }
    }

    /// Writes every `interval` until the task is cancelled, calling `refresh` before each write (to bring gauges that
    /// move with time, such as an age, up to date).
    public func run(every interval: Duration, refresh: @Sendable () -> Void = {}) async {
        while !Task.isCancelled {
            refresh()
            try? write()
            try? await Task.sleep(for: interval)
        }
    }
}

public import CoreMetrics
import FoundationEssentials
import GPSDCore
import GPSDSystem

extension LocationManager {
    /// How a manager reports its ``LocationHealth`` through swift-metrics: the factory that makes its metrics and the
    /// dimensions they carry. The library never bootstraps a factory: by default its metrics go to the one the program
    /// bootstrapped (`MetricsSystem.bootstrap`) before making the manager, or nowhere if it did not.
    ///
    /// ```swift
    /// import Prometheus
    /// let registry = PrometheusCollectorRegistry()
    /// MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
    /// let manager = LocationManager(server: .default)    // its metrics carry server="localhost:2947"
    /// // later: registry.emitToString() holds gpsd_location_fixes_total{server="localhost:2947"} …
    /// ```
    ///
    /// The metrics, each with the ``dimensions`` (by default `server` for a live gpsd, its `host:port[:device]`, or
    /// `recording`, the file's name), names starting with ``prefix``:
    ///
    /// | Name | Kind | What it counts |
    /// |---|---|---|
    /// | `gpsd_location_reconnects_total` | counter | ``LocationHealth/reconnects`` |
    /// | `gpsd_location_fixes_total` | counter | ``LocationHealth/fixes`` |
    /// | `gpsd_location_status_seconds_total` | floating-point counter, dimension `status` (``LocationStatus/name``) | ``LocationHealth/timeInStatus``, added at each status change and each report |
    /// | `gpsd_location_status` | gauge, dimension `status` | 1 for the status now, 0 for the others |
    /// | `gpsd_location_dropped_total` | counter, dimension `reason`: `skipped_line`, `rejected_fix`, `rejected_value`, `fix_without_time`, `truncated_sky`, `stream_buffer` | ``LocationHealth/statistics``, ``LocationHealth/streamDrops`` |
    /// | `gpsd_location_last_fix_age_seconds` | gauge | ``LocationHealth/lastFixAge`` as of the newest report or status change (it stands still while nothing comes: see the status) |
    /// | `gpsd_location_last_fix_timestamp_seconds` | gauge | when the receiver measured the newest fix, in seconds since 1970: `time() - gpsd_location_last_fix_timestamp_seconds` is its age at any instant |
    ///
    /// Metrics are updated where the manager decides, after it releases its lock, and allocate nothing per fix.
    public struct MetricsOptions: Sendable {
        /// Where the metrics are made; `nil` for the factory bootstrapped when the manager is made.
        public var factory: (any MetricsFactory)?
        /// The dimensions of every metric; `nil` for the manager's source (`server` or `recording`).
        public var dimensions: [(String, String)]?
        /// What every name starts with: `gpsd_location`.
        public var prefix: String
        /// Whether the manager reports metrics at all (``LocationManager/health`` is kept either way).
        public var isEnabled: Bool

        /// - Parameters:
        ///   - factory: where the metrics are made; `nil` for the factory the program bootstrapped.
        ///   - dimensions: those of every metric; `nil` for the manager's source.
        ///   - prefix: what every name starts with.
        public init(factory: (any MetricsFactory)? = nil, dimensions: [(String, String)]? = nil,
                    prefix: String = "gpsd_location") {
            self.factory = factory
            self.dimensions = dimensions
            self.prefix = prefix
            isEnabled = true
        }

        /// The bootstrapped factory, the source's dimensions.
        public static var `default`: MetricsOptions { MetricsOptions() }

        /// No metrics.
        public static var disabled: MetricsOptions {
            var options = MetricsOptions()
            options.isEnabled = false
            return options
        }
    }
}

/// The metrics of one manager, made once; ``record(_:)`` tells them what a decision changed.
final class HealthMetrics: Sendable {
    private let reconnects: Counter
    private let fixes: Counter
    /// By ``StatusKind/rawValue``.
    private let statusSeconds: [FloatingPointCounter]
    private let status: [Gauge]
    private let skippedLines, rejectedFixes, rejectedValues, fixesWithoutTime, truncatedSkies, streamBuffers: Counter
    private let lastFixAge: Gauge
    private let lastFixTimestamp: Gauge
    /// The number of the status change the status gauges show: decisions on two threads may be recorded out of
    /// order, and an older change must not undo a newer one.
    /// (The package's `Locked`, not `Synchronization.Mutex`, whose futex waits ThreadSanitizer cannot see: two
    /// decisions recording at once were reported as a race.)
    private let statusShown = Locked(-1)

    init(_ options: LocationManager.MetricsOptions, source: [(String, String)]) {
        let factory = options.factory ?? MetricsSystem.factory
        let dimensions = options.dimensions ?? source
        let prefix = options.prefix
        reconnects = Counter(label: "\(prefix)_reconnects_total", dimensions: dimensions, factory: factory)
        fixes = Counter(label: "\(prefix)_fixes_total", dimensions: dimensions, factory: factory)
        statusSeconds = StatusKind.all.map {
            FloatingPointCounter(label: "\(prefix)_status_seconds_total", dimensions: dimensions + [("status", $0.name)],
                                 factory: factory)
        }
        status = StatusKind.all.map {
            Gauge(label: "\(prefix)_status", dimensions: dimensions + [("status", $0.name)], factory: factory)
        }
        func dropped(_ reason: String) -> Counter {
            Counter(label: "\(prefix)_dropped_total", dimensions: dimensions + [("reason", reason)], factory: factory)
        }
        skippedLines = dropped("skipped_line")
        rejectedFixes = dropped("rejected_fix")
        rejectedValues = dropped("rejected_value")
        fixesWithoutTime = dropped("fix_without_time")
        truncatedSkies = dropped("truncated_sky")
        streamBuffers = dropped("stream_buffer")
        lastFixAge = Gauge(label: "\(prefix)_last_fix_age_seconds", dimensions: dimensions, factory: factory)
        lastFixTimestamp = Gauge(label: "\(prefix)_last_fix_timestamp_seconds", dimensions: dimensions, factory: factory)
    }

    /// A stream's buffer (or the delegate's backlog) dropped `count` elements.
    func streamDropped(_ count: Int) { streamBuffers.increment(by: count) }

    /// Tells the metrics what one decision changed.
    func record(_ changes: HealthTracker.Changes) {
        if changes.reconnects > 0 { reconnects.increment(by: changes.reconnects) }
        if changes.fixes > 0 { fixes.increment(by: changes.fixes) }
        if changes.seconds != StatusDurations() {
            for kind in StatusKind.all where changes.seconds[kind] > .zero {
                statusSeconds[kind.rawValue].increment(by: changes.seconds[kind].timeInterval)
            }
        }
        if let (now, change) = changes.status {
            statusShown.withLock { shown in
                guard change > shown else { return }
                shown = change
                for kind in StatusKind.all { status[kind.rawValue].record(kind == now ? 1 : 0) }
            }
        }
        if let drops = changes.statistics {
            if drops.skippedLines > 0 { skippedLines.increment(by: drops.skippedLines) }
            if drops.rejectedFixes > 0 { rejectedFixes.increment(by: drops.rejectedFixes) }
            if drops.rejectedValues > 0 { rejectedValues.increment(by: drops.rejectedValues) }
            if drops.fixesWithoutTime > 0 { fixesWithoutTime.increment(by: drops.fixesWithoutTime) }
            if drops.truncatedSkies > 0 { truncatedSkies.increment(by: drops.truncatedSkies) }
        }
        if let age = changes.lastFixAge { lastFixAge.record(age.timeInterval) }
        if let measured = changes.lastFixMeasured { lastFixTimestamp.record(measured.timeIntervalSince1970) }
    }
}

import ArgumentParser
import CoreMetrics
import Foundation
import GPSDLocation
import Prometheus
import SampleSupport
import Synchronization

/// Writes a receiver's health in Prometheus's text format for node_exporter's textfile collector
/// (`--collector.textfile.directory`). The library's own metrics (`gpsd_location_*`: reconnections, fixes, time in
/// each status, drops, the newest fix's age) come through swift-metrics, with swift-prometheus bootstrapped as the
/// backend; this program adds what it reads of the receiver: connection, fix mode, satellites seen and used,
/// accuracy, fix age. The file is replaced atomically (written beside it, then renamed), as the collector needs.
@main
struct FleetHealth: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Export gpsd receiver health for node_exporter's textfile collector.")

    @OptionGroup var source: FixSource

    @Option(name: .shortAndLong, help: ArgumentHelp("The .prom file to write.", valueName: "file"))
    var output: String

    @Option(help: ArgumentHelp("Seconds between writes.", valueName: "seconds"))
    var interval: Double = 5

    @Option(help: "Stop after this many writes.")
    var count: Int?

    func validate() throws {
        guard output.hasSuffix(".prom") else { throw ValidationError("the textfile collector reads only *.prom files") }
        guard interval >= 0.001, interval <= 100 * 365.25 * 86_400 else {
            throw ValidationError("--interval must be from 0.001 seconds to a century")
        }
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
    }

    func run() async throws {
        // The program, not the library, chooses the backend: the manager's metrics go to this registry.
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        let gps = try source.makeManager()
        let health = Health()
        // The library's dimension: `server`, or `recording` for a replay.
        let label = source.replay.map { ("recording", URL(fileURLWithPath: $0).lastPathComponent) }
            ?? ("server", gps.manager.server?.description ?? source.server)
        let exporter = Exporter(registry: registry, label: label)
        let period = Duration.seconds(interval)
        let (output, limit) = (output, count)
        let signals = try endingSignals(program: "FleetHealth")
        try await withThrowingTaskGroup(of: Void.self) { group in
            // SIGINT, SIGTERM or SIGHUP: the file as last written stays, and the program exits 0.
            group.addTask { for await _ in signals { return } }
            group.addTask {
                for try await fix in gps.updates() { health.update { $0.fix = fix } }
            }
            group.addTask { for await sky in gps.satelliteUpdates() { health.update { $0.satellites = sky.count } } }
            group.addTask {
                for await status in gps.statusUpdates() { health.update { $0.apply(status) } }
            }
            group.addTask {
                var written = 0
                while limit.map({ written < $0 }) ?? true {
                    try await Task.sleep(for: period)
                    try exporter.write(health.snapshot, gps.health, to: output)
                    written += 1
                }
            }
            try await group.next()   // the writer reached --count, a signal came, or the source failed
            group.cancelAll()
        }
    }
}

/// What is known of the receiver now.
struct HealthState: Sendable {
    var connected = false
    var fixMode = 0            // 0 unknown, 1 no fix, 2 2D, 3 3D: gpsd's TPV mode
    var fix: Location?
    var satellites: SatelliteCount?

    mutating func apply(_ status: LocationStatus) {
        switch status {
        case .connected, .waitingForFix, .noDevice: connected = true
        case .fix(let dimension, _): connected = true; fixMode = dimension == .threeDimensional ? 3 : 2
        case .fixLost, .deviceGone: fixMode = 1
        case .reconnecting: connected = false; fixMode = 0
        case .stale, .stopped, .connecting: connected = false; fixMode = 0
        }
        // What the last fix and sky said is no longer so: not exported until they come again.
        switch status {
        case .fixLost, .deviceGone, .reconnecting, .stale, .stopped: fix = nil
        default: break
        }
        switch status {
        case .deviceGone, .reconnecting, .stale, .stopped: satellites = nil
        default: break
        }
        if case .waitingForFix = status { fixMode = 1 }
    }
}

final class Health: Sendable {
    private let state = Mutex(HealthState())
    func update(_ body: (inout HealthState) -> Void) { state.withLock { body(&$0) } }
    var snapshot: HealthState { state.withLock { $0 } }
}

/// This program's gauges, in the swift-prometheus registry the library's metrics go to too; a value not known is
/// not exported (its series is absent), never a made-up number.
final class Exporter: Sendable {
    private let registry: PrometheusCollectorRegistry
    private let labels: [(String, String)]
    private let optional = Mutex<[String: Prometheus.Gauge]>([:])

    init(registry: PrometheusCollectorRegistry, label: (String, String)) {
        self.registry = registry
        labels = [label]
    }

    /// Writes the registry: the library's metrics, and this program's gauges set from `state` and the manager's
    /// `health`.
    func write(_ state: HealthState, _ health: LocationHealth, to path: String) throws {
        set("up", "", "1 if connected to gpsd.", state.connected ? 1 : 0)
        set("fix_mode", "", "0 unknown, 1 no fix, 2 2D, 3 3D.", Double(state.fixMode))
        set("satellites_visible", "", "Satellites the receiver sees.", state.satellites.map { Double($0.visible) })
        set("satellites_used", "", "Satellites in the fix.", state.satellites.map { Double($0.used) })
        set("horizontal_accuracy", "meters", "Horizontal error estimate, ~95 %.", state.fix?.horizontalAccuracy)
        set("vertical_accuracy", "meters", "Vertical error estimate, ~95 %.", state.fix?.verticalAccuracy)
        // As of this write: how old the newest fix is (kept through a loss), not when it arrived, is what a
        // dashboard wants, through a stall and after it.
        set("fix_age", "seconds", "Seconds since the receiver measured the newest fix.", health.lastFixAge.map {
            Double($0.components.seconds) + Double($0.components.attoseconds) * 1e-18
        })
        let text = registry.emitToString()
        let temporary = path + ".tmp"
        try Data(text.utf8).write(to: URL(fileURLWithPath: temporary))
        guard rename(temporary, path) == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
        }
    }

    /// Sets the gauge `gpsd_NAME[_UNIT]`, made when it first has a value and removed while it has none.
    private func set(_ name: String, _ unit: String, _ help: String, _ value: Double?) {
        let descriptor = MetricNameDescriptor(namespace: "gpsd", metricName: name, unitName: unit, helpText: help)
        optional.withLock { gauges in
            switch (value, gauges[name]) {
            case (let value?, let gauge?): gauge.set(value)
            case (let value?, nil):
                let gauge = registry.makeGauge(descriptor: descriptor, labels: labels)
                gauge.set(value)
                gauges[name] = gauge
            case (nil, let gauge?):
                registry.unregisterGauge(gauge)
                gauges[name] = nil
            case (nil, nil): break
            }
        }
    }
}

import ArgumentParser
import Foundation
import GPSDLocation
import Prometheus
import SampleSupport
import Synchronization

/// Writes a receiver's health in Prometheus's text format for node_exporter's textfile collector
/// (`--collector.textfile.directory`): fix mode, satellites seen and used, accuracy, fix age, connection and
/// reconnections. The file is replaced atomically (written beside it, then renamed), as the collector needs.
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
        let gps = try source.makeManager()
        let health = Health()
        let exporter = Exporter(label: source.replay == nil ? source.server : "replay")
        let period = Duration.seconds(interval)
        let (output, limit) = (output, count)
        let signals = try endingSignals(program: "FleetHealth")
        try await withThrowingTaskGroup(of: Void.self) { group in
            // SIGINT, SIGTERM or SIGHUP: the file as last written stays, and the program exits 0.
            group.addTask { for await _ in signals { return } }
            group.addTask {
                for try await fix in gps.updates() {
                    health.update { $0.fix = fix; $0.lastFixMeasured = fix.arrival?.measured }
                }
            }
            group.addTask { for await sky in gps.satelliteUpdates() { health.update { $0.satellites = sky.count } } }
            group.addTask {
                for await status in gps.statusUpdates() { health.update { $0.apply(status) } }
            }
            group.addTask {
                var written = 0
                while limit.map({ written < $0 }) ?? true {
                    try await Task.sleep(for: period)
                    try exporter.write(health.snapshot, to: output)
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
    var reconnects = 0
    var fix: Location?
    var satellites: SatelliteCount?
    /// When the receiver measured the newest fix (its arrival less the time gpsd or the line held it), kept
    /// through a loss: how old the newest fix is, not when it arrived, is what a dashboard wants, through a
    /// stall and after it.
    var lastFixMeasured: ContinuousClock.Instant?

    mutating func apply(_ status: LocationStatus) {
        switch status {
        case .connected, .waitingForFix, .noDevice: connected = true
        case .fix(let dimension, _): connected = true; fixMode = dimension == .threeDimensional ? 3 : 2
        case .fixLost, .deviceGone: fixMode = 1
        case .reconnecting: connected = false; fixMode = 0; reconnects += 1
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

/// The gauges, in a swift-prometheus registry; a value not known is not exported (its series is absent), never
/// a made-up number.
final class Exporter: Sendable {
    private let registry = PrometheusCollectorRegistry()
    private let labels: [(String, String)]
    private let optional = Mutex<[String: Gauge]>([:])

    private let reconnectCounter: Counter
    private let reconnects = Mutex(0)

    init(label: String) {
        labels = [("source", label)]
        reconnectCounter = registry.makeCounter(
            descriptor: MetricNameDescriptor(namespace: "gpsd", metricName: "reconnects", unitName: "total",
                                             helpText: "Connections to gpsd lost or refused since start."),
            labels: labels)
    }

    func write(_ health: HealthState, to path: String) throws {
        set("up", "", "1 if connected to gpsd.", health.connected ? 1 : 0)
        set("fix_mode", "", "0 unknown, 1 no fix, 2 2D, 3 3D.", Double(health.fixMode))
        reconnects.withLock { counted in
            reconnectCounter.increment(by: Int64(health.reconnects - counted))
            counted = health.reconnects
        }
        set("satellites_visible", "", "Satellites the receiver sees.", health.satellites.map { Double($0.visible) })
        set("satellites_used", "", "Satellites in the fix.", health.satellites.map { Double($0.used) })
        set("horizontal_accuracy", "meters", "Horizontal error estimate, ~95 %.", health.fix?.horizontalAccuracy)
        set("vertical_accuracy", "meters", "Vertical error estimate, ~95 %.", health.fix?.verticalAccuracy)
        set("fix_age", "seconds", "Seconds since the receiver measured the newest fix.", health.lastFixMeasured.map {
            let age = $0.duration(to: .now)
            return Double(age.components.seconds) + Double(age.components.attoseconds) * 1e-18
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

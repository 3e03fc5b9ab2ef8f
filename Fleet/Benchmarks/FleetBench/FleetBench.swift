import FleetCore
import FleetIngest
import FleetTestSupport
import FleetUplink
import Foundation
import GPSDLocation
import Logging
import CoreMetrics
import MetricsTestKit

#if canImport(Glibc)
import Glibc
#endif

/// The fleet's figures (issue 36), each beside its anchor, against a real Mosquitto and a real PostgreSQL with PostGIS
/// on free loopback ports. Run by Scripts/fleet-benchmark (a release build); `--fixes N` (86,400 by default) sets the
/// backlog, `--live N` (600) the fixes timed from gpsd to the broker's acknowledgement.
@main
struct FleetBench {
    static func main() async throws {
        let fixCount = option("--fixes") ?? 86_400
        let liveCount = option("--live") ?? 600
        let window = option("--in-flight") ?? 256
        var quiet = Logger(label: "fleet-bench")
        quiet.logLevel = .error

        let broker = try await Mosquitto.start()
        let database = try await PostgreSQL.start()
        let directory = try makeServerDirectory("bench")
        defer { try? FileManager.default.removeItem(at: directory) }
        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
        let address = BrokerAddress(host: "127.0.0.1", port: broker.port)
        let fixes = (0..<fixCount).map(fix(epoch:))
        print("Fleet benchmark: \(fixCount) fixes, QoS 1, \(window) in flight, Mosquitto and PostgreSQL on loopback")
        print("")

        let only = ProcessInfo.processInfo.environment["FLEET_BENCH_ONLY"]

        // 1. The backlog: a day of 1 Hz fixes in the queue, drained by the uplink, by mosquitto_pub, by paho.
        let backlog = try FixQueue(directory: path("backlog"), vehicle: try VehicleID("bench-1"))
        let queued = try measure { _ = try backlog.append(contentsOf: fixes) }
        let payloads = try backlog.batch(after: 0, limit: fixCount).map(\.payload)
        let drain = try await drainSeconds(backlog, address: address, window: window, logger: quiet)
        let lines = path("payloads.txt")
        var text = Data()
        for payload in payloads { text.append(contentsOf: payload); text.append(UInt8(ascii: "\n")) }
        try text.write(to: URL(fileURLWithPath: lines))
        let mosquittoPub = try runSeconds("/usr/bin/mosquitto_pub",
                                          ["-h", "127.0.0.1", "-p", String(broker.port), "-q", "1", "-M", String(window),
                                           "-l", "-t", "fleet/bench-1/fix", "-i", "anchor-mosquitto_pub"], input: lines)
        let script = path("paho_publish.py")
        try pahoScript.write(toFile: script, atomically: true, encoding: .utf8)
        let paho = try pahoSeconds(script: script, port: broker.port, lines: lines, window: window)
        let rate = { (seconds: Double) in Double(fixCount) / seconds }
        print("Backlog drain (\(fixCount) fixes, each acknowledged; higher is better)")
        row("fleet-uplink (Uplink, libmosquitto + SQLite)", rate(drain), "fixes/s")
        row("mosquitto_pub -q 1 -M \(window) -l", rate(mosquittoPub), "fixes/s")
        if let paho { row("paho-mqtt (Python), \(window) in flight", rate(paho), "fixes/s") } else {
            print("  paho-mqtt: did not run (python3-paho-mqtt missing, or it failed)")
        }
        print("  target: at least 5,000 fixes/s: \(rate(drain) >= 5000 ? "met" : "NOT met")")
        print(String(format: "  target: at least mosquitto_pub's rate: %@ (%.0f %% of it)",
                     rate(drain) >= rate(mosquittoPub) ? "met" : "NOT met", 100 * rate(drain) / rate(mosquittoPub)))
        print(String(format: "  (queueing the %d fixes in one transaction took %.2f s)", fixCount, queued))
        print("")
        if only == "drain" {
            await broker.stop()
            await database.stop()
            return
        }

        // 2. The ingest: rows straight into PostGIS, then end to end from the broker's queue for an absent ingest.
        let store = try FixStore(url: database.url(), logger: quiet)
        let storeTask = Task { await store.run() }
        try await store.prepare()
        let direct = try await insertSeconds(store, fixes: fixes)
        let session = try await MQTTSubscriber.connect(host: "127.0.0.1", port: broker.port, clientID: "bench-ingest",
                                                       cleanSession: false)
        _ = try await session.subscribe(FleetTopic.allFixes, qos: 1)
        await session.disconnect()
        let forIngest = try FixQueue(directory: path("for-ingest"), vehicle: try VehicleID("bench-2"))
        _ = try forIngest.append(contentsOf: fixes)
        _ = try await drainSeconds(forIngest, address: address, window: window, logger: quiet)
        var configuration = IngestConfiguration(broker: address)
        configuration.clientID = "bench-ingest"
        let ingest = Ingest(configuration: configuration, store: store, logger: quiet)
        let start = ContinuousClock.now
        let ingestTask = Task { try await ingest.run() }
        while ingest.statistics.stored < fixCount { try await Task.sleep(for: .milliseconds(5)) }
        let endToEnd = seconds(start.duration(to: .now))
        ingestTask.cancel()
        _ = try? await ingestTask.value
        print("Ingest into PostGIS (higher is better)")
        row("FixStore.insert, 1,000-row statements", Double(fixCount) / direct, "rows/s")
        row("fleet-ingest end to end, from the broker's queue", Double(fixCount) / endToEnd, "rows/s")
        print("  target: at least 10,000 rows/s: \(Double(fixCount) / endToEnd >= 10_000 ? "met" : "NOT met")")
        print("")
        storeTask.cancel()

        // 3. Live: from gpsd's TPV reaching the uplink to the broker's PUBACK.
        let latencies = try await liveLatencies(count: liveCount, address: address, directory: directory, logger: quiet)
        print("Live latency, gpsd's TPV to the broker's PUBACK (\(latencies.count) fixes at about 15 Hz; lower is better)")
        for (name, quantile) in [("p50", 0.5), ("p90", 0.9), ("p99", 0.99)] {
            row(name, percentile(latencies, quantile) * 1000, "ms")
        }
        row("max", (latencies.max() ?? 0) * 1000, "ms")
        print("  target: p99 at most 20 ms: \(percentile(latencies, 0.99) <= 0.020 ? "met" : "NOT met")")
        print("")

        // 4. Memory: fleet-uplink's resident set while a backlog builds with the broker away, and while it drains.
        let memory = try await outageMemory(fixCount: fixCount, broker: broker, directory: directory)
        print("fleet-uplink's resident memory through an outage (\(fixCount) fixes queued, then drained)")
        for (label, kilobytes) in memory.samples { row(label, Double(kilobytes) / 1024, "MiB") }
        let outage = memory.samples.filter { $0.0.hasPrefix("outage") }.map(\.1)
        let growth = Double((outage.last ?? 0) - (outage.first ?? 0)) / 1024
        print(String(format: "  growth from the first to the last quarter of the outage: %+.1f MiB", growth))
        print("  target: flat (under 5 MiB of growth): \(abs(growth) < 5 ? "met" : "NOT met")")

        await broker.stop()
        await database.stop()
    }

    // MARK: Measurements

    /// Starts an uplink on `queue` and waits until the broker has acknowledged every fix in it: the seconds taken.
    static func drainSeconds(_ queue: FixQueue, address: BrokerAddress, window: Int, logger: Logger) async throws -> Double {
        var configuration = UplinkConfiguration(vehicle: queue.vehicle, broker: address)
        configuration.maximumInFlight = window
        // No metrics backend, as a program that bootstraps none (a backend's cost is the backend's).
        let uplink = try Uplink(configuration: configuration, queue: queue, logger: logger,
                                metricsFactory: NOOPMetricsHandler.instance)
        let total = queue.statistics.depth
        let start = ContinuousClock.now
        uplink.start()
        while uplink.statistics.acknowledged < total { try await Task.sleep(for: .milliseconds(1)) }
        let elapsed = seconds(start.duration(to: .now))
        await uplink.stop()
        return elapsed
    }

    /// Inserts `fixes` as vehicle bench-3 in 1,000-row statements: the seconds taken.
    static func insertSeconds(_ store: FixStore, fixes: [Location]) async throws -> Double {
        let vehicle = try VehicleID("bench-3")
        let messages = fixes.enumerated().map { FleetMessage(vehicle: vehicle, seq: Int64($0.offset + 1), location: $0.element) }
        let start = ContinuousClock.now
        var index = 0
        while index < messages.count {
            let end = min(index + 1000, messages.count)
            _ = try await store.insert(Array(messages[index..<end]))
            index = end
        }
        return seconds(start.duration(to: .now))
    }

    /// Fixes from a real gpsd (gpsfake, one RMC an epoch) through AsyncLocationManager into an uplink: each fix's
    /// time from its TPV's arrival to the broker's acknowledgement, in seconds.
    static func liveLatencies(count: Int, address: BrokerAddress, directory: URL, logger: Logger) async throws -> [Double] {
        let log = directory.appendingPathComponent("live.nmea")
        // gpsfake replays from its start, before the manager connects: a minute of epochs more than are read.
        try nmea(epochs: count + 1200).write(to: log, atomically: true, encoding: .utf8)
        let queue = try FixQueue(directory: directory.appendingPathComponent("live").path, vehicle: try VehicleID("bench-live"))
        let metrics = TestMetrics()
        let uplink = try Uplink(configuration: UplinkConfiguration(vehicle: queue.vehicle, broker: address), queue: queue,
                                logger: logger, metricsFactory: metrics)
        uplink.start()
        for await state in uplink.statusChanges() where state == .online { break }
        let fake = try await GPSFakeProcess.start(logs: [log], cycle: 0.05)
        do {
            let gps = AsyncLocationManager(server: GPSDServer(host: "127.0.0.1", port: fake.port))
            var received = 0
            for try await fix in gps.updates(delivery: .oncePerEpoch, bufferingPolicy: .unbounded) {
                // The first epochs teach the manager the receiver's cycle; time the rest.
                if received >= 10 { uplink.enqueue(fix) }
                received += 1
                if received == count + 10 { break }
            }
            await gps.stop()
        } catch {
            await fake.stop()
            throw error
        }
        await fake.stop()
        await uplink.flushQueue()
        while uplink.statistics.queue.depth > 0 || uplink.statistics.inFlight > 0 {
            try await Task.sleep(for: .milliseconds(10))
        }
        await uplink.stop()
        let timer = try metrics.expectTimer("fleet_uplink_fix_latency", [("vehicle", "bench-live")])
        return timer.values.map { Double($0) / 1e9 }
    }

    /// fleet-uplink as a process, replaying `fixCount` fixes as fast as it can while its broker is down, then draining
    /// once it is back: its VmRSS at each quarter of the outage and at the end of the drain.
    static func outageMemory(fixCount: Int, broker: Mosquitto, directory: URL) async throws
        -> (samples: [(String, Int)], Void) {
        let recording = directory.appendingPathComponent("outage.json")
        try FleetRecording.write(count: fixCount, to: recording)
        await broker.kill(SIGKILL)
        let uplinkPath = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("fleet-uplink").path
        let process = try ServerProcess(uplinkPath, [
            "--vehicle", "bench-outage", "--broker", "mqtt://127.0.0.1:\(broker.port)", "--replay", recording.path,
            "--speed", "0", "--queue", directory.appendingPathComponent("outage").path,
        ], output: directory.appendingPathComponent("outage.log").path)
        var outage: [Int] = []
        while !process.output.contains("recording ended") {
            guard process.isRunning else { throw ServerError("fleet-uplink ended: \(process.output)") }
            if let rss = residentKilobytes(process.processID) { outage.append(rss) }
            try await Task.sleep(for: .milliseconds(100))
        }
        var samples: [(String, Int)] = []
        for (index, name) in ["outage, 1st quarter", "outage, 2nd quarter", "outage, 3rd quarter", "outage, 4th quarter"]
            .enumerated() where !outage.isEmpty {
            let quarter = outage[(outage.count * index / 4)..<max(outage.count * (index + 1) / 4, outage.count * index / 4 + 1)]
            samples.append((name, quarter.max() ?? 0))
        }
        try await broker.restart()
        var draining = 0
        while process.isRunning {
            if let rss = residentKilobytes(process.processID) { draining = max(draining, rss) }
            try await Task.sleep(for: .milliseconds(100))
        }
        samples.append(("draining, highest", draining))
        return (samples, ())
    }
}

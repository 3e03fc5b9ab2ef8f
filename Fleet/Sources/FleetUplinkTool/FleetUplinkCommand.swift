import ArgumentParser
import FleetCore
import FleetToolSupport
import FleetUplink
import Foundation
import GPSDLocation
import GPSDSystem
import Logging
import UnixSignals

#if canImport(Glibc)
import Glibc
#endif

@main
struct FleetUplinkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleet-uplink",
        abstract: "Send this vehicle's fixes from gpsd to an MQTT broker, losing none while the link is down.",
        discussion: """
        Every fix gpsd reports is kept in an on-disk queue (SQLite, WAL) until the broker has acknowledged it \
        (MQTT 3.1.1, QoS 1): fleet/<vehicle>/fix gets each fix once, in order, with the vehicle and a sequence \
        number that survives restarts; fleet/<vehicle>/state the newest fix, retained; fleet/<vehicle>/status \
        online or offline (the last will). It reconnects for ever, with capped backoff and jitter. SIGINT or \
        SIGTERM stops it: it publishes offline and keeps what is unacknowledged for the next start.

        Example:
          fleet-uplink --vehicle robot-7 --broker mqtts://robot-7@fleet.example.net \\
            --password-file /etc/fleet-uplink/password --tls-ca /etc/fleet-uplink/ca.pem
        """
    )

    @Option(help: ArgumentHelp("This vehicle's name: 1 to 64 of A-Z a-z 0-9 . _ -", valueName: "id"))
    var vehicle: String

    @OptionGroup var broker: BrokerOptions

    @Option(help: ArgumentHelp("gpsd's address", valueName: "host:port"))
    var gpsd: String = "localhost:2947"

    @Option(help: ArgumentHelp("Read fixes from a gpsd recording (gpspipe -w output) instead of gpsd, at its own pace",
                               valueName: "file"))
    var replay: String?

    @Option(help: ArgumentHelp("With --replay: this many times faster than recorded; 0 for as fast as possible",
                               valueName: "factor"))
    var speed: Double = 1

    @Option(help: ArgumentHelp("The queue's directory (default: $STATE_DIRECTORY, else ~/.local/state/fleet-uplink)",
                               valueName: "dir"))
    var queue: String?

    @Option(help: ArgumentHelp("The most fixes the queue keeps; beyond it the oldest are dropped, and counted",
                               valueName: "n"))
    var queueLimit: Int = FixQueue.defaultCapacity

    @Option(help: ArgumentHelp("Fixes published and not yet acknowledged, at most", valueName: "n"))
    var maxInFlight: Int = 256

    @OptionGroup var program: ProgramOptions

    func validate() throws {
        guard VehicleID.isValid(vehicle) else { throw ValidationError("\(FleetError.invalidVehicle(vehicle))") }
        guard broker.broker != nil else { throw ValidationError("Missing expected argument '--broker <url>'") }
        if replay == nil {
            do { _ = try GPSDServer(parsing: gpsd) } catch { throw ValidationError("--gpsd: \(error)") }
        }
        guard speed >= 0, speed.isFinite else { throw ValidationError("--speed must be 0 or more") }
        guard queueLimit >= 1 else { throw ValidationError("--queue-limit must be at least 1") }
        guard (1...65_535).contains(maxInFlight) else { throw ValidationError("--max-in-flight must be 1 to 65535") }
    }

    func run() async throws {
        let (logger, metrics) = try program.bootstrap(label: "fleet-uplink")
        let vehicle = try VehicleID(vehicle)
        var configuration = UplinkConfiguration(vehicle: vehicle, broker: try broker.configuration())
        configuration.maximumInFlight = maxInFlight
        let directory = queue ?? Self.defaultQueueDirectory
        let fixQueue = try FixQueue(directory: directory, vehicle: vehicle, capacity: queueLimit)
        let uplink = try Uplink(configuration: configuration, queue: fixQueue, logger: logger)
        let depth = fixQueue.statistics
        logger.info("vehicle \(vehicle), queue \(directory) (\(depth.depth) fixes waiting, next seq \(depth.lastSeq + 1)), broker \(configuration.broker.address)")
        uplink.start()

        let gps = if let replay {
            AsyncLocationManager(recording: URL(fileURLWithPath: replay),
                                 pace: speed == 0 ? .asFastAsPossible : speed == 1 ? .realTime : .accelerated(by: speed))
        } else {
            AsyncLocationManager(server: try GPSDServer(parsing: gpsd))
        }
        let signalled = Locked(false), isReplay = replay != nil
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                var count = 0
                for try await fix in gps.updates(delivery: .oncePerEpoch, bufferingPolicy: .bufferingNewest(4096)) {
                    uplink.enqueue(fix)
                    count += 1
                }
                // gpsd's updates end only at the stop; a recording's at its end: then stay until the broker has every
                // fix (or a signal comes).
                guard isReplay, !signalled.withLock({ $0 }) else { return }
                await uplink.flushQueue()
                logger.info("recording ended: \(count) fixes given; waiting until the broker has them all")
                await uplink.drained()
            }
            group.addTask {
                for await state in uplink.statusChanges() { logger.info("broker: \(state)") }
            }
            group.addTask {
                // gpsd's side: connecting, a fix, no fix, receiver gone, reconnecting (the library retries for ever).
                for await status in gps.statusUpdates() { logger.info("gpsd: \(status)") }
            }
            group.addTask {
                await untilStopSignal(logger: logger)
                signalled.withLock { $0 = true }
            }
            if let metrics {
                group.addTask { await metrics.run(every: .seconds(5)) { uplink.refreshMetrics() } }
            }
            var failure: (any Error)?
            do { _ = try await group.next() } catch { failure = error }
            await gps.stop()
            await uplink.stop()
            group.cancelAll()
            if let failure { throw failure }
        }
        uplink.refreshMetrics()
        try? metrics?.write()
        let statistics = uplink.statistics
        var summary = "stopped: \(statistics.acknowledged) fixes acknowledged, \(statistics.queue.depth) kept in the queue"
        if statistics.queueWriteFailures > 0 {
            summary += "; the queue could not be written \(statistics.queueWriteFailures) times, \(statistics.lost) fixes lost"
        }
        if statistics.queue.dropped > 0 { summary += "; \(statistics.queue.dropped) dropped in all (the queue full)" }
        logger.info("\(summary)")
    }

    static var defaultQueueDirectory: String {
        if let state = ProcessInfo.processInfo.environment["STATE_DIRECTORY"], !state.isEmpty {
            return String(state.split(separator: ":").first ?? Substring(state))
        }
        return NSHomeDirectory() + "/.local/state/fleet-uplink"
    }

}

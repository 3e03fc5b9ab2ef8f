import ArgumentParser
import Foundation
import GPSDLocation
import Logging
import SampleSupport
import ServiceLifecycle

/// Logs one NDJSON line per epoch (the library's JSON schema) to files that rotate by size or age, with a
/// status line whenever the connection or the fix changes. Survives gpsd restarts; on SIGTERM or SIGINT it
/// finishes the line it is writing, flushes and closes the file, and exits 0.
@main
struct TelemetryLogger: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Log every epoch's fix as NDJSON to rotating files.",
        discussion: """
            Each fix line is a Location in the library's JSON schema; a status line has "event":"status". Files are \
            named PREFIX-START-N.ndjson and rotate when the next line would pass --max-bytes, or after --rotate-after \
            seconds.
            """)

    @OptionGroup var source: FixSource

    @Option(help: ArgumentHelp("The directory for the log files (made if missing).", valueName: "dir"))
    var directory: String

    @Option(help: "Start a new file before one would grow past this many bytes.")
    var maxBytes: Int = 16 * 1024 * 1024

    @Option(help: ArgumentHelp("Start a new file after this many seconds.", valueName: "seconds"))
    var rotateAfter: Double?

    @Option(help: "The start of each file's name.")
    var prefix = "telemetry"

    func validate() throws {
        guard maxBytes >= 1024 else { throw ValidationError("--max-bytes must be at least 1024") }
        if let rotateAfter, !(rotateAfter >= 0.001 && rotateAfter <= 100 * 365.25 * 86_400) {
            throw ValidationError("--rotate-after must be from 0.001 seconds to a century")
        }
    }

    func run() async throws {
        let files = try RotatingLog(
            directory: URL(fileURLWithPath: directory), prefix: prefix, maxBytes: maxBytes,
            maxAge: rotateAfter.map { .seconds($0) })
        let service = TelemetryService(gps: try source.makeManager(), sourceName: source.name, log: files)
        var logger = Logger(label: "TelemetryLogger")
        logger.logLevel = .warning
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: service, successTerminationBehavior: .gracefullyShutdownGroup)],
            logger: logger))
        // SIGINT, SIGTERM or SIGHUP shut the group down gracefully, within a second whatever the output does.
        let ender = try onEndingSignal(program: "TelemetryLogger") { await group.triggerGracefulShutdown() }
        defer { ender.cancel() }
        try await group.run()
    }
}

/// The logging loop as a service: it runs until the fixes end (a recording's end, a fatal error) or a graceful
/// shutdown (SIGTERM, SIGINT) cancels it, then closes the log.
struct TelemetryService: Service {
    let gps: AsyncLocationManager
    let sourceName: String
    let log: RotatingLog

    func run() async throws {
        log.append(StatusLine.make("started", message: "logging \(sourceName)"))
        var failure: (any Error)?
        var epochs = OpenEpochs()
        // One timeline of fixes and status changes, in the order the manager decided them. A graceful shutdown
        // (SIGTERM, SIGINT) stops the manager: the timeline ends, and every epoch it brought is written.
        let timeline = gps.liveUpdates(bufferingPolicy: .unbounded)
        do {
            try await withGracefulShutdownHandler {
                var logged: LocationStatus?
                var lastFix: Location?
                for try await update in timeline {
                    // Each fix delivered: a new epoch's (`isNewFix`), or a later report completing the epoch open
                    // (the same epoch, `isNewFix` false, a location that changed); not the fix a status carries.
                    if let fix = update.location, fix != lastFix {
                        lastFix = fix
                        for over in epochs.add(fix) { log.append(over.jsonText) }
                    }
                    // Fixes stopped: the epochs open are over, and written before the status that says so.
                    if update.locationUnavailable {
                        for over in epochs.closeAll() { log.append(over.jsonText) }
                    }
                    // The first update has the status the timeline is in (never `stopped` before it ran).
                    if update.status != logged, logged != nil || update.status != .stopped {
                        logged = update.status
                        log.append(StatusLine.make(update.status.name, message: update.status.description))
                    }
                }
            } onGracefulShutdown: {
                Task { await gps.stop() }   // the handler cannot wait; the loop ends once the stop has ended it
            }
        } catch {
            failure = error
        }
        for over in epochs.closeAll() { log.append(over.jsonText) }
        if let failure {
            log.append(StatusLine.make("failed", message: "\(failure)"))
        }
        log.append(StatusLine.make("closed", message: "log closed"))
        log.close()
        if let failure { throw failure }
    }
}

/// `{"event":"status","at":"2026-11-23T19:34:00.123Z","state":"reconnecting","message":"…"}`: when (this
/// machine's clock), what, and the library's words for it.
enum StatusLine {
    static func make(_ state: String, message: String) -> String {
        #"{"event":"status","at":\#(JSONText.quoted(GPSDTime.string(from: .now) ?? "")),"#
            + #""state":\#(JSONText.quoted(state)),"message":\#(JSONText.quoted(message))}"#
    }
}

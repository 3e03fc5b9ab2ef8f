import ArgumentParser
import Foundation
import GPSDLocation

@main
struct WhereAmI: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "whereami",
        abstract: "Print where this machine is, from gpsd.",
        discussion: """
            Prints one fix and exits, or with --follow streams fixes until interrupted. Fixes go to \
            standard output; status (server, satellites, waiting) goes to standard error.

            SERVER is gpsd's address as gpsd's own clients take it: host[:port[:device]], an IPv6 \
            address in brackets; the default is localhost:2947.

            Exit status:
              0   a fix was printed (or a stream ended normally, or by SIGINT/SIGTERM)
              64  bad usage
              66  the recording cannot be read or holds no gpsd reports
              69  gpsd cannot be reached, or the connection to it was lost
              75  no fix before --timeout
              76  gpsd answered with an error
            """,
        version: "0.1.0"
    )

    @Argument(help: ArgumentHelp("gpsd to ask, as host[:port[:device]].", valueName: "server"))
    var server: String?

    @Option(help: ArgumentHelp("Give up if no fix arrives within this many seconds.", valueName: "seconds"))
    var timeout: Double = 30

    @Option(name: .customLong("max-age"),
            help: ArgumentHelp("Accept a fix gpsd already holds if it is at most this old.", valueName: "seconds"))
    var maxAge: Double?

    @Option(help: ArgumentHelp("Wait for a fix at least this accurate (horizontal).", valueName: "metres"))
    var accuracy: Double?

    @Flag(name: .shortAndLong, help: "Stream fixes until interrupted.")
    var follow = false

    @Option(help: ArgumentHelp("With --follow: stop after this many fixes.", valueName: "n"))
    var count: Int?

    @Option(help: ArgumentHelp("With --follow: only fixes this far from the last one printed.", valueName: "metres"))
    var distance: Double?

    @Option(help: ArgumentHelp("With --follow: at most one fix per this many seconds of fix time.",
                               valueName: "seconds"))
    var interval: Double?

    @Option(help: "Output format: text, json (one object per line), csv, geojson or gpx.")
    var format: OutputFormat = .text

    @Option(help: ArgumentHelp("Read a recording (gpsd JSON, as `gpspipe -w` writes it) instead of gpsd.",
                               valueName: "file"))
    var replay: String?

    @Flag(help: "Replay the bundled recording of a drive instead of asking gpsd.")
    var demo = false

    @Option(help: ArgumentHelp("Replay this many times faster than recorded; 0 for as fast as possible.",
                               valueName: "factor"))
    var speed: Double = 1

    @Flag(name: .shortAndLong, help: "Print nothing on standard error.")
    var quiet = false

    func validate() throws {
        guard timeout > 0, timeout.isFinite else { throw ValidationError("--timeout must be a positive number of seconds") }
        if let maxAge, !(maxAge >= 0) { throw ValidationError("--max-age must be zero or more seconds") }
        if let accuracy, !(accuracy > 0) { throw ValidationError("--accuracy must be a positive number of metres") }
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
        if let distance, !(distance >= 0) { throw ValidationError("--distance must be zero or more metres") }
        if let interval, !(interval >= 0) { throw ValidationError("--interval must be zero or more seconds") }
        if !follow, count != nil || distance != nil || interval != nil {
            throw ValidationError("--count, --distance and --interval go with --follow")
        }
        guard speed >= 0, speed.isFinite else { throw ValidationError("--speed must be zero or a positive factor") }
        if replay != nil && demo { throw ValidationError("use either --replay FILE or --demo, not both") }
        if server != nil && (replay != nil || demo) {
            throw ValidationError("a server and --replay/--demo exclude each other")
        }
        if let server {
            do { _ = try GPSDServer(parsing: server) } catch { throw ValidationError(error.description) }
        }
    }

    mutating func run() async throws {
        // A reader that goes away (`whereami -f | head -1`) must end us through EPIPE, cleanly, not SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        let status = StatusReporter(quiet: quiet)
        let gps: AsyncLocationManager
        if let recording = try recordingURL() {
            let pace: ReplayPace = speed == 0 ? .asFastAsPossible : speed == 1 ? .realTime : .accelerated(by: speed)
            status.say("replaying \(recording.lastPathComponent)" + (speed == 1 ? "" : speed == 0 ? " as fast as possible" : " at \(Field.number(speed))×"))
            gps = AsyncLocationManager(recording: recording, pace: pace)
        } else {
            let server = try server.map(GPSDServer.init(parsing:)) ?? .default
            status.say("asking gpsd at \(server)")
            gps = AsyncLocationManager(server: server)
        }
        let satellites = Task { [status] in
            for await sky in gps.satelliteUpdates() { status.say("satellites: \(sky.used) used of \(sky.visible) seen") }
        }
        defer { satellites.cancel() }
        let output = Output()
        do {
            if follow {
                try await stream(from: gps, to: output, status: status)
            } else {
                status.say("waiting for a fix (up to \(Field.number(timeout)) s)")
                let fix = try await gps.requestLocation(
                    timeout: .seconds(timeout), maximumAge: maxAge.map { .seconds($0) }, desiredAccuracy: accuracy)
                var writer = format.makeWriter(streaming: false)
                output.write(writer.header + writer.record(fix) + writer.footer)
            }
        } catch let error as LocationError {
            status.fail(error.message)
            throw ExitCode(Self.exitStatus(for: error))
        }
    }

    /// The file to replay: --replay's, the bundled one for --demo, or nil for a live gpsd.
    private func recordingURL() throws -> URL? {
        if let replay { return URL(filePath: replay) }
        guard demo else { return nil }
        guard let url = Bundle.module.url(forResource: "drive.gpsd", withExtension: "json") else {
            throw ValidationError("the bundled recording is missing from this build")
        }
        return url
    }

    /// --follow: the document's header at once, a record per fix, the footer at the end, however it ends.
    private func stream(from gps: AsyncLocationManager, to output: Output, status: StatusReporter) async throws {
        let writer = format.makeWriter(streaming: true)
        // Signals are caught before the header goes out: from then on, a stream always closes its document.
        let interruption = Interruption()
        let signals = SignalWatcher(signals: [SIGINT, SIGTERM]) { interruption.fire() }
        defer { signals.cancel() }
        output.write(writer.header)
        let (count, interval, distance, accuracy) = (count, interval, distance, accuracy)
        let firstFixTimeout = Duration.seconds(timeout)
        status.say("waiting for fixes (first within \(Field.number(timeout)) s)")

        // A live receiver cannot wait for a slow reader, so keep the newest fixes; a recording can, and a
        // replay as fast as possible would otherwise outrun the writer and lose fixes.
        let buffering: AsyncThrowingStream<Location, any Error>.Continuation.BufferingPolicy =
            replay != nil || demo ? .unbounded : AsyncLocationManager.defaultBufferingPolicy
        let firstFix = FirstFixWatch()
        let consumer = Task { [writer] () throws -> any LocationWriter in
            var writer = writer
            var printed = 0
            var lastTime: Date?
            for try await fix in gps.updates(desiredAccuracy: accuracy, distanceFilter: distance, bufferingPolicy: buffering) {
                firstFix.sawFix()
                if let interval, let last = lastTime, let time = fix.timestamp, time.timeIntervalSince(last) < interval {
                    continue
                }
                lastTime = fix.timestamp ?? lastTime
                output.write(writer.record(fix))
                printed += 1
                if let count, printed >= count { break }
            }
            return writer
        }
        let watchdog = Task {
            try await Task.sleep(for: firstFixTimeout)
            if firstFix.expireUnlessSeen() { consumer.cancel() }
        }
        defer { watchdog.cancel() }
        interruption.attach { consumer.cancel() }

        let finished: any LocationWriter
        do {
            finished = try await consumer.value
        } catch {
            output.write(writer.footer)
            throw error
        }
        output.write(finished.footer)
        if firstFix.expired {
            throw LocationError(.timedOut, "no fix within \(Field.number(timeout)) s")
        }
    }

    static func exitStatus(for error: LocationError) -> Int32 {
        switch error.code {
        case .gpsdUnavailable, .connectionLost: 69
        case .timedOut, .locationUnknown: 75
        case .invalidRecording: 66
        case .protocolError: 76
        default: 1
        }
    }
}

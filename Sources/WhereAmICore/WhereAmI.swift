import ArgumentParser
import CDemoRecording
import FoundationEssentials
import Glibc
import GPSDLocation
import GPSDSystem
import ProcessEnd

/// The `whereami` command (the executable target only calls `main()`).
package struct WhereAmI: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "whereami",
        abstract: "Print where this machine is, from gpsd.",
        discussion: """
            Prints one fix and exits, with --follow streams fixes until interrupted, or with --watch shows a \
            live panel of the receiver until q is pressed. Fixes go to \
            standard output; status goes to standard error, a line for each change (connecting, \
            waiting for a fix with the satellites seen and used, fix lost, reconnecting and the like). One fix \
            waits up to 30 s unless --timeout says otherwise. A stream waits for gpsd (not running yet, say) and \
            its first fix as long as it takes unless --timeout bounds that wait, and keeps going while gpsd \
            restarts. With --sky it prints the satellites the receiver sees instead (system, number, PRN, \
            elevation, azimuth, C/N0, used, health), once, as text or with --format json as one object; it \
            waits for them as one fix does.

            --watch draws on the terminal, like gpsd's cgps: the position, the fix and its accuracy, speed, \
            course, heading, the fix's age, the status, the satellites as a table with their signal and a \
            plot of the sky (north up; rings at the horizon, 30 and 60 degrees of elevation; a satellite is the \
            letter of its system, a capital when the fix uses it). It follows the terminal's size, and q, \
            Ctrl-C, SIGINT, SIGTERM and SIGHUP end it with the terminal as it was, as does a crash; Ctrl-Z \
            suspends it likewise, until fg. When standard output is not a \
            terminal, --watch refuses with exit status 64; --follow writes fixes as lines instead.

            SIGINT, SIGTERM and SIGHUP end --follow and --watch within a second, whatever standard output is \
            doing: what the output takes within 0.4 s of the signal is written (a stream's document closed; into a \
            pipe, whole lines), the rest is lost and the exit status is 74. One still running 0.8 s after the signal is ended by \
            it. One fix and --sky are ended by the signal at once.

            SERVER is gpsd's address as gpsd's own clients take it: host[:port[:device]], an IPv6 \
            address in brackets; the default is localhost:2947. `whereami help` prints this help.
            """ + "\n\n" + ExitStatus.helpText(width: ExitStatus.helpWidth),
        version: "0.1.0"
    )

    @OptionGroup(title: "Connection") var connection: ConnectionOptions
    @OptionGroup(title: "Request") var request: RequestOptions
    @OptionGroup(title: "Output") var output: OutputOptions
    @OptionGroup(title: "Satellites") var satellites: SkyOptions

    func validate() throws {
        // The completions offer `help` as argument-parser's help subcommand, and the help mentions it: honour it.
        if connection.server == GPSDServer(host: "help") { throw CleanExit.helpRequest(self) }
        try satellites.check(request: request, output: output)
        if request.watch, output.format != .text { throw ValidationError("--format does not go with --watch") }
    }

    mutating func run() async throws {
        // A reader that goes away (`whereami -f | head -1`) must end us through EPIPE, cleanly, not SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        if let problem = connection.recordingProblem() {
            StatusReporter(quiet: true).fail(problem)
            throw ExitCode(66)
        }
        // The panel shows the status; a line on standard error would be written across it.
        let oneFix = !satellites.sky && !request.watch && !request.follow
        let status = StatusReporter(quiet: output.quiet || request.watch, oneFix: oneFix)
        // A terminal that hangs up fails writes with EIO, racing the SIGHUP that comes with it: either way the
        // terminal has gone, and the run ends as SIGHUP ends it.
        let onTerminal = isatty(STDOUT_FILENO) == 1
        if request.watch, !onTerminal {
            status.fail("--watch draws on a terminal, and standard output is not one (--follow writes lines)")
            throw ExitCode(64)
        }
        do {
            let gps = try makeManager(status: status)
            // Each change of the manager's status, one line each (the stream is made before anything starts, so
            // none is missed); a stream keeps going through gpsd's restarts, and says so here.
            let changes = gps.statusUpdates()
            let reporter = Task { [status] in
                for await change in changes { status.report(change) }
            }
            defer { reporter.cancel() }
            if satellites.sky {
                try await printSky(from: gps, to: Output(), status: status)
            } else if request.watch {
                try await watch(from: gps, source: sourceDescription)
            } else if request.follow {
                try await stream(from: gps, to: Output(), status: status)
            } else {
                try await printOneFix(from: gps, to: Output(), status: status)
            }
        } catch let error as LocationError {
            // Without a fix in time, what stood in the way: gpsd unreachable, no receiver, too few satellites (a
            // request's own timeout names it already, with the status in the error).
            let why = error.code == .timedOut && error.status == nil ? status.obstacle.map { " (\($0))" } ?? "" : ""
            status.fail(error.message + why)
            throw ExitCode(Self.exitStatus(for: error))
        } catch let failure as Output.Failure {
            if failure.readerWentAway || (onTerminal && failure.number == EIO) { return }
            if failure.abandoned, let signal = EndRequest.active?.signal {
                status.fail("standard output took nothing for \(EndRequest.outputGrace.secondsText) after "
                            + "\(EndRequest.name(of: signal)); the rest of the output is lost")
                throw ExitCode(74)
            }
            status.fail("cannot write to standard output: \(String(cString: strerror(failure.number)))")
            throw ExitCode(74)
        }
    }

    private func makeManager(status: StatusReporter) throws -> AsyncLocationManager {
        if connection.replay != nil || connection.demo {
            let speed = connection.speed ?? 1
            let pace: ReplayPace = speed == 0 ? .asFastAsPossible : speed == 1 ? .realTime : .accelerated(by: speed)
            let how = speed == 1 ? "" : speed == 0 ? " as fast as possible" : " at \(Field.number(speed))×"
            if let replay = connection.replay {
                let recording = URL(filePath: replay)
                status.say("replaying \(recording.lastPathComponent)\(how)")
                return AsyncLocationManager(recording: recording, pace: pace)
            }
            // The demo recording is part of the program: a copied binary has it.
            status.say("replaying \(Self.demoName)\(how)")
            return AsyncLocationManager(recording: Self.demoRecording, named: Self.demoName, pace: pace)
        }
        let server = connection.server ?? .default
        status.say("asking gpsd at \(server)")
        return AsyncLocationManager(server: server)
    }

    /// Where fixes come from, for --watch's title: `gpsd at localhost:2947`, `replaying drive.gpsd.json`.
    private var sourceDescription: String {
        if let replay = connection.replay { return "replaying " + URL(filePath: replay).lastPathComponent }
        if connection.demo { return "replaying " + Self.demoName }
        return "gpsd at \(connection.server ?? .default)"
    }

    /// The name of the recording `--demo` replays (Resources/drive.gpsd.json, built into the program).
    static let demoName = "drive.gpsd.json"
    /// The demo recording's bytes, built into the program (Sources/CDemoRecording).
    static var demoRecording: [UInt8] {
        var count = 0
        guard let bytes = gpsdlocation_demo_recording(&count) else { return [] }
        return Array(UnsafeBufferPointer(start: bytes, count: count))
    }

    static func exitStatus(for error: LocationError) -> Int32 {
        switch error.code {
        case .gpsdUnavailable, .connectionLost, .notGPSD: 69
        case .timedOut, .locationUnknown: 75
        case .invalidRecording: 66
        case .protocolError: 76
        default: 1
        }
    }
}

extension WhereAmI {
    /// What a run makes of its options before it starts anything: the waits as durations, and the output's
    /// header, a record and footer. For the fuzz target of the command line, which must not connect or replay.
    package func preflight() -> (timeout: Duration, maximumAge: Duration?, sample: String) {
        var writer = output.format.makeWriter(streaming: request.follow)
        let sample = writer.header + writer.record(Location(coordinate: .init(latitude: 0, longitude: 0))) + writer.footer
        return (request.firstFixTimeout.duration, request.maxAge?.duration, sample)
    }

    /// Parses the program's arguments and runs the command: the executable's whole main.
    ///
    /// A plain command line is read by ``quickParse(_:)`` and run as `main()` runs a command (its errors through
    /// `exit(withError:)`); any other goes through swift-argument-parser's `main()`.
    package static func runAsMain() async {
        guard var command = quickParse(Array(CommandLine.arguments.dropFirst())) else {
            await main()
            return
        }
        do {
            try await command.run()
        } catch {
            exit(withError: error)
        }
    }
}

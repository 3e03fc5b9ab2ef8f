import ArgumentParser
import Glibc
import GPSDLocation

/// Where fixes come from: a gpsd, or a recording.
struct ConnectionOptions: ParsableArguments {
    @Argument(
        help: ArgumentHelp(
            "gpsd to ask, as host[:port[:device]]; an IPv6 address in brackets ([::1]:2947).", valueName: "server"),
        completion: .default,
        transform: ConnectionOptions.server(parsing:))
    var server: GPSDServer?

    /// The positional argument's transform, which ``WhereAmI/quickParse(_:)`` uses too.
    static func server(parsing text: String) throws -> GPSDServer { try GPSDServer(parsing: text) }

    @Option(help: ArgumentHelp("Read a recording (gpsd JSON, as `gpspipe -w` writes it) instead of gpsd.",
                               valueName: "file"),
            completion: .file())
    var replay: String?

    @Flag(help: "Replay the bundled recording of a drive instead of asking gpsd.")
    var demo = false

    @Option(parsing: .unconditional,
            help: ArgumentHelp("With --replay or --demo: replay this many times faster than recorded; 0 for as fast as possible.",
                               valueName: "factor"))
    var speed: Double?

    var isReplay: Bool { replay != nil || demo }

    /// Why the recording `--replay` names cannot be read (it does not exist, is a directory, may not be read),
    /// or `nil`: asked before anything starts, so that the error comes before any status line, with the status
    /// of a recording that cannot be read (66). Opened without blocking (a named pipe with no writer yet opens at
    /// once) and closed again: the replay opens it itself.
    func recordingProblem() -> String? {
        guard let replay else { return nil }
        let descriptor = open(replay, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return "cannot read recording \(replay): \(String(cString: strerror(errno)))" }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT != S_IFDIR else {
            return "cannot read recording \(replay): \(String(cString: strerror(EISDIR)))"
        }
        return nil
    }

    /// The slowest replay --speed takes.
    static let slowestSpeed = 0.001

    func validate() throws {
        if replay != nil && demo { throw ValidationError("use either --replay FILE or --demo, not both") }
        if server != nil && isReplay { throw ValidationError("a server and --replay/--demo exclude each other") }
        if let speed {
            guard isReplay else { throw ValidationError("--speed goes with --replay or --demo") }
            // Slower than a thousandth, a recorded second lasts over a quarter of an hour: a slip of the keys.
            guard speed == 0 || (speed >= Self.slowestSpeed && speed.isFinite) else {
                throw ValidationError("--speed must be 0 (as fast as possible) or a factor of at least \(Self.slowestSpeed)")
            }
        }
    }
}

/// What to wait for: one fix, or a stream of them.
struct RequestOptions: ParsableArguments {
    @Option(parsing: .unconditional,
            help: ArgumentHelp(
                "Give up if no fix arrives within this many seconds ('inf': wait as long as it takes). Without "
                    + "it, one fix waits 30 s, and --follow waits for gpsd and its first fix as long as it takes.",
                valueName: "seconds"))
    var timeout: Seconds?

    @Option(name: .customLong("max-age"), parsing: .unconditional,
            help: ArgumentHelp("Accept a fix gpsd already holds if it is at most this old.", valueName: "seconds"))
    var maxAge: Seconds?

    @Option(parsing: .unconditional,
            help: ArgumentHelp("Wait for a fix at least this accurate (horizontal).", valueName: "metres"))
    var accuracy: Double?

    @Flag(name: .shortAndLong, help: "Stream fixes until interrupted.")
    var follow = false

    @Flag(name: .shortAndLong,
          help: "Show a live panel of the receiver (the fix, its status, the satellites) until q or Ctrl-C. Standard output must be a terminal.")
    var watch = false

    @Option(parsing: .unconditional, help: ArgumentHelp("With --follow: stop after this many fixes.", valueName: "n"))
    var count: Int?

    @Option(parsing: .unconditional,
            help: ArgumentHelp("With --follow: only fixes this far from the last one printed.", valueName: "metres"))
    var distance: Double?

    @Option(parsing: .unconditional,
            help: ArgumentHelp("With --follow: at most one fix per this many seconds of fix time.", valueName: "seconds"))
    var interval: Double?

    /// How long one fix waits when --timeout is not given.
    static let defaultTimeout = Seconds(30)

    /// How long to wait for the first fix: --timeout if given; otherwise ``defaultTimeout`` for one fix, and no
    /// limit for --follow, which waits for gpsd (not running yet, say) and its first fix as long as it takes.
    var firstFixTimeout: Seconds { timeout ?? (follow ? Seconds(.infinity) : Self.defaultTimeout) }

    func validate() throws {
        if let timeout, !(timeout.value > 0) {
            throw ValidationError("--timeout must be a positive number of seconds, or inf")
        }
        if let maxAge, !(maxAge.value >= 0) { throw ValidationError("--max-age must be zero or more seconds, or inf") }
        if let accuracy, !(accuracy > 0 && accuracy.isFinite) {
            throw ValidationError("--accuracy must be a positive number of metres")
        }
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
        if let distance, !(distance >= 0 && distance.isFinite) {
            throw ValidationError("--distance must be zero or more metres")
        }
        if let interval, !(interval >= 0 && interval.isFinite) {
            throw ValidationError("--interval must be zero or more seconds")
        }
        if watch {
            if follow { throw ValidationError("use either --follow or --watch, not both") }
            if timeout != nil || maxAge != nil || accuracy != nil {
                throw ValidationError("--timeout, --max-age and --accuracy do not go with --watch")
            }
        }
        if !follow, count != nil || distance != nil || interval != nil {
            throw ValidationError("--count, --distance and --interval go with --follow")
        }
    }
}

/// How fixes are written.
struct OutputOptions: ParsableArguments {
    @Option(help: "Output format: text, json (one object per line), csv, geojson or gpx.")
    var format: OutputFormat = .text

    @Flag(name: .shortAndLong, help: "Print no status on standard error (errors are still printed there).")
    var quiet = false
}

/// A number of seconds from the command line: a decimal number, or `inf` (`infinity`, `never`) for no limit.
///
/// Any value converts to a `Duration` without trapping: a century or more is no limit
/// (`AsyncLocationManager.noTimeout`).
struct Seconds: ExpressibleByArgument, Sendable, Equatable, CustomStringConvertible {
    var value: Double

    init(_ value: Double) { self.value = value }

    init?(argument: String) {
        switch argument.lowercased() {
        case "inf", "infinity", "never": value = .infinity
        default:
            guard let value = Double(argument), !value.isNaN else { return nil }
            self.value = value
        }
    }

    var duration: Duration {
        let unlimited = AsyncLocationManager.noTimeout
        return value >= Double(unlimited.components.seconds) ? unlimited : .seconds(max(0, value))
    }

    var isUnlimited: Bool { duration >= AsyncLocationManager.noTimeout }

    var description: String { value.isInfinite ? "inf" : Field.number(value) }

    var defaultValueDescription: String { description }
}

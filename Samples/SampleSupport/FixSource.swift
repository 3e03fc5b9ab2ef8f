public import ArgumentParser
public import GPSDLocation
import Foundation
import ProcessEnd

/// Where a sample's fixes come from: a gpsd (the default, `localhost:2947`), or a recording of one replayed.
///
/// ```swift
/// struct Sample: AsyncParsableCommand {
///     @OptionGroup var source: FixSource
///     func run() async throws { for try await fix in source.makeManager().updates() { print(fix) } }
/// }
/// ```
public struct FixSource: ParsableArguments, Sendable {
    @Argument(help: "The gpsd to watch: host[:port][:device].")
    public var server: String = "localhost:2947"

    @Option(help: ArgumentHelp("Replay this gpsd JSON recording (what gpspipe -w writes) instead of watching gpsd.",
                               valueName: "file"))
    public var replay: String?

    @Option(help: "With --replay: how many times faster than recorded; 0 replays as fast as possible.")
    public var speed: Double = 1

    public init() {}

    public func validate() throws {
        if replay == nil {
            do { _ = try GPSDServer(parsing: server) } catch { throw ValidationError("\(error)") }
        }
        guard speed >= 0, speed.isFinite else { throw ValidationError("--speed must be 0 or more") }
    }

    /// What the sample says it watches, for its first status line.
    public var name: String { replay.map { "recording \($0)" } ?? "gpsd at \(server)" }

    /// A manager of the chosen source, reconnecting with the default policy.
    public func makeManager() throws -> AsyncLocationManager {
        if let replay {
            let pace: ReplayPace = speed == 0 ? .asFastAsPossible : speed == 1 ? .realTime : .accelerated(by: speed)
            return AsyncLocationManager(recording: URL(fileURLWithPath: replay), pace: pace)
        }
        return AsyncLocationManager(server: try GPSDServer(parsing: server))
    }
}

/// Writes one whole line to standard output in one write(2) (continued only if the system takes part of it), so
/// lines from two tasks never interleave; after SIGINT, SIGTERM or SIGHUP it waits for room briefly at most
/// (``BoundedOutput``).
public func printLine(_ line: String) {
    try? BoundedOutput.standardOutput.write(line + "\n")
}

/// A status line for standard error: `TelemetryLogger: reconnecting in 0.5 s (attempt 2): …`.
public func report(_ program: String, _ message: String) {
    try? BoundedOutput.standardError.write("\(program): \(message)\n")
}

/// SIGINT, SIGTERM and SIGHUP from now on, as they come: the sample ends its work at the first, and exits 0.
///
/// The end is bounded whatever the sample's output does (a full pipe, a stalled terminal): after the signal,
/// ``printLine(_:)`` and ``report(_:_:)`` wait 0.4 s at most for room, and a sample still running 0.8 s after
/// it is ended by the signal itself, its exit status saying so.
public func endingSignals(program: String) throws -> AsyncStream<Int32> {
    try EndRequest.catching(program: program).signals
}

/// Runs `end` once, at the first of SIGINT, SIGTERM and SIGHUP (``endingSignals(program:)``), on a task that
/// the caller cancels once the sample has ended by itself.
///
/// ```swift
/// let ender = try onEndingSignal(program: "TrackRecorder") { await gps.stop() }
/// defer { ender.cancel() }
/// ```
public func onEndingSignal(
    program: String, _ end: @escaping @Sendable () async -> Void
) throws -> Task<Void, Never> {
    let signals = try endingSignals(program: program)
    return Task {
        for await _ in signals {
            await end()
            return
        }
    }
}

/// A signal's name as a shell says it: `SIGTERM`.
public func signalName(_ signal: Int32) -> String {
    EndRequest.name(of: signal)
}

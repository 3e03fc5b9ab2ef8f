public import Foundation
import GPSDLocation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A real gpsd on a private loopback port, fed from NMEA logs by gpsd's `gpsfake`.
///
/// Each instance runs `gpsfake -q -n -P <port> -c <cycle> [-1] -W <linger> LOG…` as the leader of its own process
/// group, with its own `TMPDIR`, and stdout/stderr captured to files in that directory. ``stop()`` (or `deinit`)
/// ends the whole group (gpsfake and its gpsd) with SIGKILL.
///
/// ```swift
/// try #require(GPSFake.isAvailable)
/// let fake = try GPSFake.start(logs: [Fixtures.url("moving.nmea")], waitForClient: true)
/// defer { fake.stop() }
/// // connect a client to fake.server ("127.0.0.1:PORT"); the log starts once it sends ?WATCH
/// ```
///
/// ## Seeing a log from its first sentence
/// gpsd reads a log as soon as gpsfake has loaded it, tens of milliseconds after it starts listening, whether or
/// not anybody is connected (`-n`; without `-n` gpsfake still writes into the pty and what a late client would
/// have seen is lost too). A client that connects after ``start(logs:cycle:once:lingerAfterEnd:waitForClient:)``
/// returns may therefore miss the first epochs of a `once` log. Pass `waitForClient: true` to hold the logs back
/// until the first client has a watch in effect (see `LogGate`): that client then gets every sentence's report.
/// It is told `{"class":"DEVICES","devices":[]}` at first, then a `DEVICE` report per log as gpsd opens it.
///
/// ## The end of a `once` log
/// gpsfake keeps gpsd up for `lingerAfterEnd` seconds after the last sentence, then kills it and exits with status
/// 1 (that is normal, not an error); clients see the connection close. gpsfake busy-waits one CPU core meanwhile.
public final class GPSFake: Sendable {
    /// gpsd's port on 127.0.0.1.
    public let port: UInt16
    /// gpsfake's process id, which is also its process group id.
    public let processID: Int32
    /// The private directory used as gpsfake's `TMPDIR` (removed by ``stop()``).
    public let directory: URL

    /// `"127.0.0.1:PORT"`, the form libgps clients and `gpspipe` take.
    public var server: String { "127.0.0.1:\(port)" }

    private let state: Locked<State>
    private let gateFinished: DispatchSemaphore?

    private struct State {
        var stopped = false
    }

    private init(port: UInt16, processID: Int32, directory: URL, state: Locked<State>, gateFinished: DispatchSemaphore?) {
        self.port = port
        self.processID = processID
        self.directory = directory
        self.state = state
        self.gateFinished = gateFinished
    }

    deinit {
        stop()
    }

    /// Where gpsfake is installed, if it is (it also needs `/usr/sbin/gpsd`).
    static var gpsfakePath: String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let candidates = ["/usr/bin"] + path.split(separator: ":").map(String.init) + ["/usr/local/bin"]
        return candidates.map { "\($0)/gpsfake" }.first { access($0, X_OK) == 0 }
    }

    /// Whether `gpsfake` and `/usr/sbin/gpsd` exist on this machine.
    public static var isAvailable: Bool {
        gpsfakePath != nil && access("/usr/sbin/gpsd", X_OK) == 0
    }

    /// Starts a real gpsd via gpsfake on a free loopback port, feeding `logs` (one device each).
    ///
    /// Returns once gpsd listens on ``port`` and accepts a TCP connection (typically 0.3 s), waiting at most 15 s.
    /// If the port is taken by someone else meanwhile, it retries with another port (three attempts).
    ///
    /// - Parameters:
    ///   - logs: NMEA (or other gpsfake) logs; each becomes one device, `/dev/pts/N`.
    ///   - cycle: Seconds between sentences (`gpsfake -c`). gpsfake needs about 10 ms per sentence on top (measured:
    ///     `-c 0` gives 10 ms, `0.01` 20 ms, `0.05` 61 ms per sentence). gpsd reports the same for 0 … 0.05.
    ///   - once: Play the logs once (`-1`) instead of in a loop.
    ///   - lingerAfterEnd: With `once`, seconds gpsd stays up after the last sentence (`-W`) before gpsfake ends it.
    ///   - waitForClient: Hold the logs back until a client has a watch in effect, so it sees them from the first
    ///     sentence. Only the first watching client is awaited; gpsd then logs its client traffic to stderr.
    /// - Throws: ``GPSFakeError`` with gpsfake's stderr when gpsfake or gpsd is missing, a log does not exist, or
    ///   gpsd does not come up.
    public static func start(
        logs: [URL], cycle: Double = 0.05, once: Bool = true, lingerAfterEnd: Int = 5, waitForClient: Bool = false
    ) throws -> GPSFake {
        guard let gpsfake = gpsfakePath, access("/usr/sbin/gpsd", X_OK) == 0 else {
            throw GPSFakeError(.notInstalled, "need gpsfake (gpsd-clients, python3-gps) and /usr/sbin/gpsd (gpsd)")
        }
        for log in logs where access(log.path, R_OK) != 0 {
            throw GPSFakeError(.missingLog, log.path)
        }
        var lastError = GPSFakeError(.portUnavailable, "no attempt made")
        for _ in 0..<3 {
            do {
                return try launch(gpsfake: gpsfake, logs: logs, cycle: cycle, once: once,
                                  linger: lingerAfterEnd, waitForClient: waitForClient)
            } catch let error as GPSFakeError where error.code == .portUnavailable {
                lastError = error
            }
        }
        throw lastError
    }

    /// One attempt on one port. Throws `.portUnavailable` when gpsd could not bind it.
    private static func launch(
        gpsfake: String, logs: [URL], cycle: Double, once: Bool, linger: Int, waitForClient: Bool
    ) throws -> GPSFake {
        let port = freeLoopbackPort()
        guard port != 0 else { throw GPSFakeError(.portUnavailable, "could not bind a socket to 127.0.0.1:0") }
        let directory = try makePrivateDirectory()
        var cleanUp = true
        defer { if cleanUp { try? FileManager.default.removeItem(atPath: directory) } }

        let gate = waitForClient ? try LogGate.prepare(logs: logs, in: directory) : nil
        var arguments = ["-q", "-n", "-P", String(port), "-c", String(cycle), "-W", String(linger)]
        if once { arguments.append("-1") }
        if waitForClient { arguments += ["-D", "2"] }
        arguments += gate?.entries.map(\.pipe) ?? logs.map(\.path)

        var environment = ProcessInfo.processInfo.environment
        environment["TMPDIR"] = directory
        environment["PYTHONHOME"] = nil   // gpsfake must run under Debian's /usr/bin/python3 (its shebang)
        environment["PYTHONPATH"] = nil   // with Debian's python3-gps, not a pyenv's modules

        let standardError = "\(directory)/gpsfake.stderr"
        let pid: pid_t
        do {
            pid = try ProcessGroup.spawn(
                path: gpsfake, arguments: arguments, environment: environment,
                standardOutput: .file("\(directory)/gpsfake.stdout"), standardError: .file(standardError))
        } catch {
            throw GPSFakeError(.spawnFailed, "\(error.function) \(gpsfake)", errno: error.errno)
        }

        let commandLine = ([gpsfake] + arguments).joined(separator: " ")
        do {
            try waitUntilListening(pid: pid, port: port, standardError: standardError, commandLine: commandLine)
        } catch {
            ProcessGroup.killAndReap(pid)
            throw error
        }

        let state = Locked(State())
        var gateFinished: DispatchSemaphore?
        if let gate {
            let finished = DispatchSemaphore(value: 0)
            gateFinished = finished
            Thread.detachNewThread {
                gate.run(standardError: standardError) { state.withLock { $0.stopped } }
                finished.signal()
            }
        }
        cleanUp = false
        return GPSFake(port: port, processID: pid, directory: URL(fileURLWithPath: directory), state: state,
                       gateFinished: gateFinished)
    }

    /// Polls until a process of gpsfake's group listens on 127.0.0.1:`port` and a connection succeeds.
    private static func waitUntilListening(pid: pid_t, port: UInt16, standardError: String, commandLine: String) throws {
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(15)
        func stderrText() -> String { ProcFile.read(standardError) ?? "" }
        while true {
            let text = stderrText()
            // gpsd keeps running on ::1 when 127.0.0.1:port is taken; the port is someone else's then.
            if text.contains("can't bind to IPv4 port") || text.contains("Address already in use") {
                throw GPSFakeError(.portUnavailable, "port \(port) taken: \(commandLine)", standardError: text)
            }
            if let status = ProcessGroup.exitStatus(ofUnreaped: pid) {
                throw GPSFakeError(.exited, commandLine, standardError: stderrText(), exitStatus: status)
            }
            // Without /proc, accept any listener on the port (and rely on the stderr check above).
            if ProcessGroup.groupListens(pid, onLoopbackPort: port) ?? true, canConnect(port: port) {
                return
            }
            if clock.now >= deadline {
                throw GPSFakeError(.timedOut, "no gpsd on port \(port) after 15 s: \(commandLine)",
                                   standardError: stderrText())
            }
            usleep(10_000)
        }
    }

    private static func makePrivateDirectory() throws -> String {
        let base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array("\(base)/gpsfake.XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw GPSFakeError(.setupFailed, "mkdtemp in \(base)", errno: errno)
        }
        return String(cString: made)
    }

    /// What gpsfake and gpsd wrote to stderr so far (with `waitForClient`, gpsd's client traffic too).
    public var standardError: String {
        ProcFile.read(directory.appendingPathComponent("gpsfake.stderr").path) ?? ""
    }

    /// Whether gpsfake is still running (a `once` log ends it `lingerAfterEnd` seconds after its last sentence).
    public var isRunning: Bool {
        state.withLock { !$0.stopped } && ProcessGroup.exitStatus(ofUnreaped: processID) == nil
    }

    /// Kills the whole process group with SIGKILL, reaps it, removes the private `TMPDIR`. Idempotent; also done
    /// in `deinit`.
    ///
    /// gpsfake first gets a SIGTERM (at most 0.5 s) so that it reaps its gpsd itself; otherwise the killed gpsd
    /// would linger as init's zombie (1–2 s in some containers) and show up in `pgrep gpsd`. Takes about 30 ms.
    public func stop() {
        let first = state.withLock { state in
            defer { state.stopped = true }
            return !state.stopped
        }
        guard first else { return }
        ProcessGroup.killAndReap(processID)
        _ = gateFinished?.wait(timeout: .now() + 2)
        ProcessGroup.waitUntilEmpty(processID, timeout: .seconds(2))
        try? FileManager.default.removeItem(at: directory)
    }
}

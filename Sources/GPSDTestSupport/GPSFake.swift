public import Foundation
import GPSDLocation
import Subprocess
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// A real gpsd on a private loopback port, fed from NMEA logs by gpsd's `gpsfake`.
///
/// ``run(logs:cycle:once:lingerAfterEnd:waitForClient:port:_:)`` runs
/// `gpsfake -q -n -P <port> -c <cycle> [-1] -W <linger> LOG…` through swift-subprocess, as the leader of a new
/// process group, with its own `TMPDIR` and its stdout/stderr in files there, hands it to the body, and ends it
/// afterwards however the body ends.
///
/// ```swift
/// try await GPSFake.run(logs: [Fixtures.url("moving.nmea")], waitForClient: true) { fake in
///     // connect a client to fake.server ("127.0.0.1:PORT"); the log starts once it sends ?WATCH
/// }
/// ```
///
/// ## Seeing a log from its first sentence
/// gpsd reads a log as soon as gpsfake has loaded it, tens of milliseconds after it starts listening, whether or
/// not anybody is connected. A client that connects late may miss the first epochs of a `once` log. With
/// `waitForClient: true` the logs are held back until the first client has a watch in effect (see `LogGate`).
///
/// ## The end of a `once` log
/// gpsfake keeps gpsd up for `lingerAfterEnd` seconds after the last sentence, then kills it and exits with status
/// 1 (normal, not an error); clients see the connection close. gpsfake busy-waits one CPU core meanwhile.
///
/// ## Ending it
/// gpsfake ignores SIGTERM as a way to end itself: it kills (and reaps) its gpsd and goes on. ``stop()`` sends
/// it SIGTERM, waits (at most 0.5 s) until its gpsd is gone, then SIGKILLs the whole group; swift-subprocess
/// reaps gpsfake. gpsd is gpsfake's child, not ours: which members of the group remain is read from `/proc`.
public final class GPSFake: Sendable {
    /// gpsd's port on 127.0.0.1.
    public let port: UInt16
    /// gpsfake's process id, which is also its process group id.
    public let processID: Int32
    /// The private directory used as gpsfake's `TMPDIR` (removed when it has stopped).
    public let directory: URL

    /// `"127.0.0.1:PORT"`, the form libgps clients and `gpspipe` take.
    public var server: String { "127.0.0.1:\(port)" }

    private let stopRequest: AsyncStream<Void>.Continuation
    private let ended: Task<Void, Never>

    private init(port: UInt16, processID: Int32, directory: URL, stopRequest: AsyncStream<Void>.Continuation,
                 ended: Task<Void, Never>) {
        self.port = port
        self.processID = processID
        self.directory = directory
        self.stopRequest = stopRequest
        self.ended = ended
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

    /// Runs `body` with a real gpsd via gpsfake on a free loopback port (or `port`), feeding `logs` (one device
    /// each), and stops it afterwards, however `body` ends.
    ///
    /// - Parameters:
    ///   - logs: NMEA (or other gpsfake) logs; each becomes one device, `/dev/pts/N`.
    ///   - cycle: Seconds between sentences (`gpsfake -c`). gpsfake needs about 10 ms per sentence on top.
    ///   - once: Play the logs once (`-1`) instead of in a loop.
    ///   - lingerAfterEnd: With `once`, seconds gpsd stays up after the last sentence (`-W`).
    ///   - waitForClient: Hold the logs back until a client has a watch in effect, so it sees them from the first
    ///     sentence. gpsd then logs its client traffic to stderr (``standardError``).
    ///   - port: The port to use (a restart on the same port); by default a free one, retried if taken.
    /// - Throws: ``GPSFakeError`` with gpsfake's stderr when gpsfake or gpsd is missing, a log does not exist, or
    ///   gpsd does not come up; or what `body` throws.
    public static func run<T>(
        logs: [URL], cycle: Double = 0.05, once: Bool = true, lingerAfterEnd: Int = 5, waitForClient: Bool = false,
        port: UInt16? = nil, _ body: (GPSFake) async throws -> T
    ) async throws -> T {
        let fake = try await start(logs: logs, cycle: cycle, once: once, lingerAfterEnd: lingerAfterEnd,
                                   waitForClient: waitForClient, port: port)
        do {
            let result = try await body(fake)
            await fake.stop()
            return result
        } catch {
            await fake.stop()
            throw error
        }
    }

    /// Starts gpsfake; returns once gpsd listens on ``port`` and accepts a connection (waiting at most 15 s).
    /// The caller must ``stop()`` it.
    public static func start(
        logs: [URL], cycle: Double = 0.05, once: Bool = true, lingerAfterEnd: Int = 5, waitForClient: Bool = false,
        port: UInt16? = nil
    ) async throws -> GPSFake {
        guard let gpsfake = gpsfakePath, access("/usr/sbin/gpsd", X_OK) == 0 else {
            throw GPSFakeError(.notInstalled, "need gpsfake (gpsd-clients, python3-gps) and /usr/sbin/gpsd (gpsd)")
        }
        for log in logs where access(log.path, R_OK) != 0 {
            throw GPSFakeError(.missingLog, log.path)
        }
        var lastError = GPSFakeError(.portUnavailable, "no attempt made")
        for _ in 0..<(port == nil ? 3 : 1) {
            do {
                return try await launch(gpsfake: gpsfake, logs: logs, cycle: cycle, once: once, linger: lingerAfterEnd,
                                        waitForClient: waitForClient, port: port ?? freeLoopbackPort())
            } catch let error as GPSFakeError where error.code == .portUnavailable {
                lastError = error
            }
        }
        throw lastError
    }

    /// One attempt on one port. Throws `.portUnavailable` when gpsd could not bind it.
    private static func launch(
        gpsfake: String, logs: [URL], cycle: Double, once: Bool, linger: Int, waitForClient: Bool, port: UInt16
    ) async throws -> GPSFake {
        guard port != 0 else { throw GPSFakeError(.portUnavailable, "could not bind a socket to 127.0.0.1:0") }
        let directory = try makePrivateDirectory()
        let gate = waitForClient ? try LogGate.prepare(logs: logs, in: directory) : nil
        var arguments = ["-q", "-n", "-P", String(port), "-c", String(cycle), "-W", String(linger)]
        if once { arguments.append("-1") }
        if waitForClient { arguments += ["-D", "2"] }
        arguments += gate?.entries.map(\.pipe) ?? logs.map(\.path)
        let commandLine = ([gpsfake] + arguments).joined(separator: " ")
        let standardError = "\(directory)/gpsfake.stderr"

        let (started, startedSink) = AsyncStream.makeStream(of: Result<Int32, any Error>.self)
        let (stopRequests, stopRequest) = AsyncStream.makeStream(of: Void.self)
        let ended = Task {
            do {
                let output = try FileDescriptor.open("\(directory)/gpsfake.stdout", .writeOnly,
                                                     options: [.create, .append, .closeOnExec], permissions: .ownerReadWrite)
                let errors = try FileDescriptor.open(standardError, .writeOnly,
                                                     options: [.create, .append, .closeOnExec], permissions: .ownerReadWrite)
                var options = PlatformOptions()
                options.processGroupID = 0   // a group of its own, whose id is gpsfake's pid
                _ = try await Subprocess.run(
                    .path(FilePath(gpsfake)), arguments: Arguments(arguments),
                    // gpsfake must run under Debian's /usr/bin/python3 (its shebang), with Debian's python3-gps.
                    environment: .inherit.updating(["TMPDIR": directory, "PYTHONHOME": nil, "PYTHONPATH": nil]),
                    platformOptions: options, input: .none,
                    output: .fileDescriptor(output, closeAfterSpawningProcess: true),
                    error: .fileDescriptor(errors, closeAfterSpawningProcess: true)
                ) { execution in
                    let pid = execution.processIdentifier.value
                    do {
                        try await waitUntilListening(pid: pid, port: port, standardError: standardError,
                                                     commandLine: commandLine)
                    } catch {
                        await end(execution)
                        startedSink.yield(.failure(error))
                        return
                    }
                    if let gate {
                        Thread.detachNewThread { gate.run(standardError: standardError) { ProcFS.hasEnded(pid) } }
                    }
                    startedSink.yield(.success(pid))
                    for await _ in stopRequests { break }
                    await end(execution)
                }
            } catch {
                startedSink.yield(.failure(GPSFakeError(.spawnFailed, "\(commandLine): \(error)")))
            }
            startedSink.finish()
        }
        var results = started.makeAsyncIterator()
        let pid: Int32
        switch await results.next() {
        case .success(let started)?: pid = started
        case .failure(let error)?:
            await ended.value
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        case nil:
            throw GPSFakeError(.spawnFailed, commandLine)
        }
        return GPSFake(port: port, processID: pid, directory: URL(fileURLWithPath: directory), stopRequest: stopRequest,
                       ended: ended)
    }

    /// Ends gpsfake and its gpsd: SIGTERM to gpsfake, which kills and reaps its gpsd (so no zombie is left for
    /// init to reap late), then SIGKILL to the whole group.
    private static func end(_ execution: Execution<NoInput, FileDescriptorOutput, FileDescriptorOutput>) async {
        let pid = execution.processIdentifier.value
        try? execution.send(signal: .terminate)
        await waitUntil(timeout: .milliseconds(500)) { (ProcFS.members(of: pid) ?? []).allSatisfy { $0 == pid } }
        try? execution.send(signal: .kill, toProcessGroup: true)
    }

    private static func waitUntil(timeout: Duration, _ condition: () -> Bool) async {
        let deadline = ContinuousClock.now + timeout
        while !condition() && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(2))
        }
    }

    /// Polls until a process of gpsfake's group listens on 127.0.0.1:`port` and a connection succeeds.
    private static func waitUntilListening(pid: pid_t, port: UInt16, standardError: String, commandLine: String) async throws {
        let deadline = ContinuousClock.now + .seconds(15)
        func stderrText() -> String { ProcFile.read(standardError) ?? "" }
        while true {
            let text = stderrText()
            // gpsd keeps running on ::1 when 127.0.0.1:port is taken; the port is someone else's then.
            if text.contains("can't bind to IPv4 port") || text.contains("Address already in use") {
                throw GPSFakeError(.portUnavailable, "port \(port) taken: \(commandLine)", standardError: text)
            }
            if ProcFS.hasEnded(pid) {
                throw GPSFakeError(.exited, commandLine, standardError: stderrText())
            }
            if ProcFS.groupListens(pid, onLoopbackPort: port) ?? true, canConnect(port: port) {
                return
            }
            if ContinuousClock.now >= deadline {
                throw GPSFakeError(.timedOut, "no gpsd on port \(port) after 15 s: \(commandLine)",
                                   standardError: stderrText())
            }
            try await Task.sleep(for: .milliseconds(10))
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
    public var isRunning: Bool { !ProcFS.hasEnded(processID) }

    /// Stops gpsfake and its gpsd with SIGSTOP, as `kill -STOP` would: the connection stays open and silent.
    public func suspend() { kill(-processID, SIGSTOP) }

    /// Lets a suspended gpsfake and gpsd go on (SIGCONT). ``stop()`` ends a suspended one too.
    public func resume() { kill(-processID, SIGCONT) }

    /// One of gpsfake's two processes, to stop on its own.
    public enum Member: Sendable {
        /// gpsfake itself, which writes the logs to the receivers' ptys: stopped, the receivers fall silent, and
        /// gpsd keeps their last fixes.
        case feeder
        /// gpsfake's gpsd: stopped, it reads and sends nothing. The feeder does not wait for it and goes on
        /// writing; a pty keeps what was written (it holds about 16 KB, minutes of a receiver's sentences), and
        /// gpsd reads it all at once when it goes on.
        case gpsd
    }

    /// gpsd's process id: the process of gpsfake's group named `gpsd`; `nil` if there is none.
    public var gpsdProcessID: Int32? {
        ProcFS.members(of: processID)?.first { $0 != processID && ProcFS.command(of: $0) == "gpsd" }
    }

    /// Stops `member` alone with SIGSTOP, as `kill -STOP` would; the other goes on.
    /// - Throws: ``GPSFakeError`` (``GPSFakeError/Code/exited``) when the process is not there.
    public func suspend(_ member: Member) throws { try signal(member, SIGSTOP) }

    /// Lets `member` go on (SIGCONT). ``stop()`` ends a suspended one too.
    /// - Throws: ``GPSFakeError`` (``GPSFakeError/Code/exited``) when the process is not there.
    public func resume(_ member: Member) throws { try signal(member, SIGCONT) }

    private func signal(_ member: Member, _ signal: Int32) throws {
        let pid: Int32? = switch member {
        case .feeder: isRunning ? processID : nil
        case .gpsd: gpsdProcessID
        }
        guard let pid, kill(pid, signal) == 0 else {
            throw GPSFakeError(.exited, "no \(member) in gpsfake's process group \(processID)", standardError: standardError)
        }
    }

    /// Ends gpsfake and its gpsd (see *Ending it*), waits until the group is gone, and removes the private
    /// `TMPDIR`. Idempotent; ``run(logs:cycle:once:lingerAfterEnd:waitForClient:port:_:)`` calls it.
    public func stop() async {
        stopRequest.finish()
        await ended.value
        // gpsd is gpsfake's child: if gpsfake could not reap it, init does; wait (bounded) for that too.
        await Self.waitUntil(timeout: .seconds(2)) { ProcFS.members(of: processID)?.isEmpty ?? true }
        try? FileManager.default.removeItem(at: directory)
    }
}

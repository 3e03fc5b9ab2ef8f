import Foundation
import GPSDTestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The `whereami` binary that `swift build --build-tests` put next to this test bundle.
///
/// Found from the test process's own executable (`/proc/self/exe`), so any `--scratch-path` works.
enum WhereAmIBinary {
    static let url: URL = {
        let executable: URL
        if let resolved = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            executable = URL(fileURLWithPath: resolved)
        } else {
            executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        }
        // On Linux the test bundle is a plain executable (`….xctest`) in the build directory; on macOS the
        // executable is inside `….xctest/Contents/MacOS`, and the tool sits next to the bundle.
        var directory = executable.deletingLastPathComponent()
        while directory.path != "/" {
            let candidate = directory.appendingPathComponent("whereami")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return executable.deletingLastPathComponent().appendingPathComponent("whereami")
    }()
}

/// How a run of a program ended and what it wrote.
struct CLIResult: Sendable, CustomStringConvertible {
    var status: Int32
    /// True when it ended by an uncaught signal (`status` is then the signal number).
    var endedBySignal: Bool
    /// True when the test had to kill it because it ran past its deadline.
    var killedAfterDeadline: Bool
    var stdout: String
    var stderr: String
    /// From just before launch to the moment it exited.
    var elapsed: Duration
    /// When it exited (or the test gave up on it).
    var ended: ContinuousClock.Instant

    var stdoutLines: [String] { stdout.split(separator: "\n", omittingEmptySubsequences: true).map(String.init) }

    var description: String {
        "status \(endedBySignal ? "signal " : "")\(status)\(killedAfterDeadline ? " (killed after deadline)" : "")"
            + " after \(elapsed)\n--- stdout:\n\(stdout.prefix(4000))\n--- stderr:\n\(stderr.prefix(4000))"
    }
}

/// A child process with both output pipes read continuously on threads of their own (so a full pipe never
/// blocks it), whose standard output can be watched while it runs.
///
/// Spawned with `posix_spawn` rather than Foundation's `Process`, to control what the child inherits:
/// - signal dispositions: `Process` passes on what this test process ignores, and the library's tests, which run
///   in the same process, ignore SIGPIPE process-wide (libgps does). A whereami started from here would then
///   never see SIGPIPE, unlike one started from a shell. Here the child gets SIGPIPE, SIGINT, SIGTERM, … at
///   their defaults and an empty signal mask, as a shell gives them;
/// - descriptors: `Process` makes its pipes without close-on-exec and closes the rest in the child by a scan
///   that races with descriptors other threads open meanwhile. Here every descriptor is close-on-exec from the
///   start and the child gets only 0, 1 and 2.
///
/// The child leads a process group of its own; its exit is taken by `waitpid` on a thread of its own, and timed
/// there.
final class CLIProcess: @unchecked Sendable {
    private let condition = NSCondition()
    // Guarded by `condition`:
    private var stdoutData = Data()
    private var newlineTimes: [ContinuousClock.Instant] = []
    private var stderrData = Data()
    private var openStreams = 2
    private var exited: (status: Int32, bySignal: Bool, at: ContinuousClock.Instant)?
    private var killedAfterDeadline = false

    let processIdentifier: pid_t
    let started: ContinuousClock.Instant

    struct SpawnError: Error, CustomStringConvertible {
        var function: String
        var code: Int32
        var description: String { "\(function): \(String(cString: strerror(code)))" }
    }

    /// Launches `executable` (by default `whereami`) with `arguments`, standard input from `/dev/null`.
    ///
    /// With `slowReader`, its standard output is a pipe of one page (4 KiB, not 64) that is not read for that
    /// long: a reader downstream that is busy, so the program's writes block once the page is full.
    init(_ arguments: [String], executable: URL = WhereAmIBinary.url, slowReader: Duration? = nil) throws {
        func makePipe() throws -> (read: Int32, write: Int32) {
            var fds: [Int32] = [-1, -1]
            guard Self.pipe2(&fds, O_CLOEXEC) == 0 else { throw SpawnError(function: "pipe2", code: errno) }
            return (fds[0], fds[1])
        }
        let output = try makePipe()
        let errors = try makePipe()
        if slowReader != nil {
            _ = fcntl(output.write, 1031 /* F_SETPIPE_SZ */, 4096)
        }
        let childEnds = [output.write, errors.write]
        defer { childEnds.forEach { close($0) } }   // this process must not keep them open, or no end-of-file
        var readEnds = [output.read, errors.read]
        defer { readEnds.forEach { close($0) } }    // emptied once the reading threads own them

        let pid: pid_t
        started = ContinuousClock.now
        do {
            pid = try ProcessGroup.spawn(
                path: executable.path, arguments: arguments, environment: ProcessInfo.processInfo.environment,
                standardOutput: .descriptor(output.write), standardError: .descriptor(errors.write))
        } catch {
            throw SpawnError(function: "\(error.function) \(executable.path)", code: error.errno)
        }
        processIdentifier = pid
        let child = pid

        startReading(output.read, isStandardOutput: true, after: slowReader)
        startReading(errors.read, isStandardOutput: false)
        readEnds = []
        Thread.detachNewThread { [self] in
            var status: Int32 = 0
            while waitpid(child, &status, 0) < 0 && errno == EINTR {}
            let now = ContinuousClock.now
            let bySignal = status & 0x7f != 0
            condition.lock()
            exited = (bySignal ? status & 0x7f : (status >> 8) & 0xff, bySignal, now)
            condition.broadcast()
            condition.unlock()
        }
    }

    /// glibc's `pipe2` (Swift's Glibc leaves it out): the pipe is close-on-exec from the start, with no moment in
    /// which a process spawned by another thread could inherit it.
    private static let pipe2: @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32 = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "pipe2") else {
            return { fds, flags in
                guard pipe(fds) == 0 else { return -1 }
                for fd in [fds[0], fds[1]] { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
                return 0
            }
        }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32).self)
    }()

    private func startReading(_ fd: Int32, isStandardOutput: Bool, after pause: Duration? = nil) {
        Thread.detachNewThread { [self] in
            if let pause { Thread.sleep(forTimeInterval: pause.seconds) }
            var chunk = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                condition.lock()
                if count > 0 {
                    if isStandardOutput {
                        let now = ContinuousClock.now
                        newlineTimes += chunk[..<count].lazy.filter { $0 == UInt8(ascii: "\n") }.map { _ in now }
                        stdoutData.append(contentsOf: chunk[..<count])
                    } else {
                        stderrData.append(contentsOf: chunk[..<count])
                    }
                } else {
                    openStreams -= 1
                }
                condition.broadcast()
                condition.unlock()
                if count <= 0 { break }
            }
            close(fd)
        }
    }

    /// When each line of standard output so far was read from the pipe (by the reading thread, as it came).
    var lineArrivals: [ContinuousClock.Instant] {
        condition.lock()
        defer { condition.unlock() }
        return newlineTimes
    }

    /// Whether it has not exited yet.
    var isRunning: Bool {
        condition.lock()
        defer { condition.unlock() }
        return exited == nil
    }

    /// What it wrote to standard output so far.
    var stdoutSoFar: String {
        condition.lock()
        defer { condition.unlock() }
        return String(decoding: stdoutData, as: UTF8.self)
    }

    /// Blocks until `predicate` holds for the standard output written so far, the process has exited and closed
    /// its output (then false unless the predicate holds on what it wrote), or `timeout` passes (false).
    func waitForOutput(timeout: Duration, _ predicate: (String) -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout.seconds)
        condition.lock()
        defer { condition.unlock() }
        while true {
            if predicate(String(decoding: stdoutData, as: UTF8.self)) { return true }
            if exited != nil && openStreams == 0 { return false }
            if !condition.wait(until: deadline) {
                return predicate(String(decoding: stdoutData, as: UTF8.self))
            }
        }
    }

    /// Sends SIGINT.
    func interrupt() { kill(processIdentifier, SIGINT) }

    /// Sends SIGTERM.
    func terminate() { kill(processIdentifier, SIGTERM) }

    /// Blocks until the process has exited and both pipes are at end-of-file; after `deadline` it is killed
    /// with SIGKILL (and the result says so).
    func finish(deadline: Duration = .seconds(30)) -> CLIResult {
        let limit = Date(timeIntervalSinceNow: deadline.seconds)
        condition.lock()
        while exited == nil || openStreams > 0 {
            if !condition.wait(until: limit) {
                if exited == nil {
                    killedAfterDeadline = true
                    kill(-processIdentifier, SIGKILL)   // its whole group (a pipeline's too)
                }
                // Give the kill (and the readers) a moment, then stop waiting for good.
                let grace = Date(timeIntervalSinceNow: 5)
                while exited == nil || openStreams > 0 {
                    if !condition.wait(until: grace) { break }
                }
                break
            }
        }
        let end = exited
        let result = CLIResult(
            status: end?.status ?? -1, endedBySignal: end?.bySignal ?? false, killedAfterDeadline: killedAfterDeadline,
            stdout: String(decoding: stdoutData, as: UTF8.self), stderr: String(decoding: stderrData, as: UTF8.self),
            elapsed: started.duration(to: end?.at ?? .now), ended: end?.at ?? .now)
        condition.unlock()
        return result
    }

    deinit {
        if isRunning { kill(-processIdentifier, SIGKILL) }
    }
}

extension Duration {
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) * 1e-18
    }
}

/// Runs `body` on a thread of its own and awaits its result, so that blocking work (waiting for a process,
/// starting gpsfake) never occupies one of the few threads of Swift's cooperative pool.
func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread {
            continuation.resume(with: Result { try body() })
        }
    }
}

/// Runs `whereami` with `arguments` to its end (killing it after `deadline`), off the cooperative pool.
func whereami(_ arguments: String..., deadline: Duration = .seconds(30)) async throws -> CLIResult {
    try await whereami(arguments, deadline: deadline)
}

func whereami(_ arguments: [String], deadline: Duration = .seconds(30)) async throws -> CLIResult {
    try await offPool { try CLIProcess(arguments).finish(deadline: deadline) }
}

/// Launches `whereami` with `arguments` and returns it running, for tests that watch or signal it.
func startWhereAmI(_ arguments: [String]) async throws -> CLIProcess {
    try await offPool { try CLIProcess(arguments) }
}

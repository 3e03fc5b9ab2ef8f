package import Foundation
import GPSDLocation
import GPSDSystem
import Subprocess
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// A child process (whereami, gpspipe, python, bash) run through swift-subprocess: in a process group of its
/// own, with SIGPIPE and the other signals at their defaults and no descriptors but 0, 1 and 2 (as a shell
/// starts it), its output collected as it comes and watchable while it runs, signalled and finished by the
/// test.
package final class CLIProcess: Sendable {
    private enum Command: Sendable { case signal(Subprocess.Signal), finish(deadline: Duration) }

    private struct State {
        var stdout: [UInt8] = []
        var stderr: [UInt8] = []
        var killedAfterDeadline = false
        var waiters: [Int: (onStandardError: Bool, predicate: @Sendable (String) -> Bool,
                             continuation: CheckedContinuation<Bool, Never>)] = [:]
        var nextWaiter = 0
        var outputClosed = false
    }

    package let processIdentifier: Int32
    package let started: ContinuousClock.Instant
    private let state: Locked<State>
    private let commands: AsyncStream<Command>.Continuation
    private let run: Task<CLIResult, Never>

    private init(processIdentifier: pid_t, started: ContinuousClock.Instant, state: Locked<State>,
                 commands: AsyncStream<Command>.Continuation, run: Task<CLIResult, Never>) {
        self.processIdentifier = processIdentifier
        self.started = started
        self.state = state
        self.commands = commands
        self.run = run
    }

    /// A process its test let go of without finishing it (the test threw, say) is killed with its group, soon
    /// after (by the task that watches it, while the test process runs); one already finished is left as it was.
    deinit {
        commands.yield(.finish(deadline: .zero))
        commands.finish()
    }

    /// Launches `executable` (by default `whereami`) with `arguments`, standard input from `/dev/null`.
    ///
    /// With `slowReader`, its standard output is a pipe of one page (4 KiB, not 64) that is not read for that
    /// long: a reader downstream that is busy, so the program's writes block once the page is full. That pipe
    /// is made here: swift-subprocess makes its own pipes, of the system's size. With `pausingAfterFirstOutput`,
    /// the pause begins once the first output has been read (a stream whose data starts only after it connects).
    ///
    /// Keep the value until `finish(deadline:)`: once the last reference goes, the process is killed.
    package static func start(
        _ arguments: [String], executable: URL = BuiltProduct.url("whereami"), slowReader: Duration? = nil,
        pausingAfterFirstOutput: Bool = false
    ) async throws -> CLIProcess
    {
        let state = Locked(State())
        let (commands, commandSink) = AsyncStream.makeStream(of: Command.self)
        let (launched, launchedSink) = AsyncStream.makeStream(of: Result<pid_t, any Error>.self)
        let started = ContinuousClock.now
        let executablePath = FilePath(executable.path)
        let run = Task { () -> CLIResult in
            var status = TerminationStatus.exited(-1)
            do {
                if let slowReader {
                    let pipe = try FileDescriptor.pipe()
                    _ = fcntl(pipe.writeEnd.rawValue, 1031 /* F_SETPIPE_SZ */, 4096)
                    status = try await launch(
                        executablePath, arguments, output: .fileDescriptor(pipe.writeEnd, closeAfterSpawningProcess: true),
                        state: state, commands: commands, launched: launchedSink
                    ) { _ in
                        { await readOnThread(pipe.readEnd, pausing: slowReader, afterFirstOutput: pausingAfterFirstOutput, into: state) }
                    }
                } else {
                    status = try await launch(
                        executablePath, arguments, output: .sequence, state: state, commands: commands, launched: launchedSink
                    ) { execution in { await collect(execution.standardOutput, into: state, isStandardOutput: true) } }
                }
            } catch {
                launchedSink.yield(.failure(error))
            }
            let ended = ContinuousClock.now
            return state.withLock { state in
                let (code, bySignal): (Int32, Bool) = switch status {
                case .exited(let code): (code, false)
                case .signaled(let signal): (signal, true)
                }
                return CLIResult(
                    status: code, endedBySignal: bySignal, killedAfterDeadline: state.killedAfterDeadline,
                    stdout: String(decoding: state.stdout, as: UTF8.self), stderr: String(decoding: state.stderr, as: UTF8.self),
                    elapsed: started.duration(to: ended), ended: ended)
            }
        }
        var iterator = launched.makeAsyncIterator()
        guard case .success(let pid)? = await iterator.next() else {
            commandSink.finish()
            let result = await run.value
            throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: "cannot run \(executable.path): \(result)"])
        }
        return CLIProcess(processIdentifier: pid, started: started, state: state, commands: commandSink, run: run)
    }

    /// Runs the program in a process group of its own until it has ended: its standard output as `output` (read
    /// by what `standardOutputReader` returns), its standard error collected.
    private static func launch<Output: OutputProtocol>(
        _ executable: FilePath, _ arguments: [String], output: Output, state: Locked<State>,
        commands: AsyncStream<Command>, launched: AsyncStream<Result<pid_t, any Error>>.Continuation,
        standardOutputReader: (Execution<NoInput, Output, SequenceOutput>) -> @Sendable () async -> Void
    ) async throws -> TerminationStatus {
        var options = PlatformOptions()
        options.processGroupID = 0
        return try await Subprocess.run(
            .path(executable), arguments: Arguments(arguments), platformOptions: options, input: .none,
            output: output, error: .sequence
        ) { execution in
            launched.yield(.success(execution.processIdentifier.value))
            await supervise(
                readers: [
                    standardOutputReader(execution),
                    { await collect(execution.standardError, into: state, isStandardOutput: false) },
                ],
                commands: commands, state: state, send: { try? execution.send(signal: $0, toProcessGroup: $1) })
        }.terminationStatus
    }

    /// Reads the output until it closes, obeys signal commands meanwhile, and on `finish` waits for the end or
    /// kills the group at the deadline.
    private static func supervise(
        readers: [@Sendable () async -> Void], commands: AsyncStream<Command>, state: Locked<State>,
        send: @escaping @Sendable (Subprocess.Signal, Bool) -> Void
    ) async {
        await withTaskGroup(of: Bool.self) { group in
            for reader in readers {
                group.addTask {
                    await reader()
                    return true
                }
            }
            group.addTask {
                for await command in commands {
                    switch command {
                    case .signal(let signal): send(signal, false)
                    case .finish(let deadline):
                        guard (try? await Task.sleep(for: deadline)) != nil else { return false }
                        state.withLock { $0.killedAfterDeadline = true }
                        send(.kill, true)   // its whole group (a pipeline's too)
                        return false
                    }
                }
                return false
            }
            // Once both outputs have closed, stop waiting for commands (and for a deadline).
            var open = readers.count
            while open > 0, let reader = await group.next() {
                if reader { open -= 1 }
            }
            state.withLock { state in
                state.outputClosed = true
                defer { state.waiters.removeAll() }
                return state.waiters.values.map(\.continuation)
            }.forEach { $0.resume(returning: false) }
            group.cancelAll()
        }
    }

    private static func collect(_ sequence: SubprocessOutputSequence, into state: Locked<State>, isStandardOutput: Bool) async {
        do {
            for try await buffer in sequence {
                let bytes = buffer.withUnsafeBytes { Array($0) }
                append(bytes, into: state, isStandardOutput: isStandardOutput)
            }
        } catch {}
    }

    /// The slow reader: after `pause`, reads the pipe on a thread of its own until end of file.
    private static func readOnThread(
        _ fd: FileDescriptor, pausing pause: Duration, afterFirstOutput: Bool, into state: Locked<State>
    ) async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                var chunk = [UInt8](repeating: 0, count: 65_536)
                var paused = false
                if !afterFirstOutput {
                    Thread.sleep(forTimeInterval: pause.seconds)
                    paused = true
                }
                while let count = try? chunk.withUnsafeMutableBytes({ try fd.read(into: $0) }), count > 0 {
                    append(Array(chunk[..<count]), into: state, isStandardOutput: true)
                    if !paused {
                        Thread.sleep(forTimeInterval: pause.seconds)
                        paused = true
                    }
                }
                try? fd.close()
                done.resume()
            }
        }
    }

    private static func append(_ bytes: [UInt8], into state: Locked<State>, isStandardOutput: Bool) {
        state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            if isStandardOutput {
                state.stdout += bytes
            } else {
                state.stderr += bytes
            }
            let text = String(decoding: isStandardOutput ? state.stdout : state.stderr, as: UTF8.self)
            let ready = state.waiters.filter { $0.value.onStandardError != isStandardOutput && $0.value.predicate(text) }
            for id in ready.keys { state.waiters.removeValue(forKey: id) }
            return ready.values.map(\.continuation)
        }.forEach { $0.resume(returning: true) }
    }

    /// Whether it has not ended yet (it is neither gone nor a zombie).
    package var isRunning: Bool { Self.isRunning(processIdentifier) }

    /// Whether process `pid` has not ended yet: it is neither gone nor a zombie (which still answers kill(0)).
    package static func isRunning(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        return !["Z", "X"].contains(stat[stat.index(after: close)...].split(separator: " ").first)
    }

    /// What it wrote to standard output so far.
    package var stdoutSoFar: String { state.withLock { String(decoding: $0.stdout, as: UTF8.self) } }

    /// What it wrote to standard error so far.
    package var stderrSoFar: String { state.withLock { String(decoding: $0.stderr, as: UTF8.self) } }

    /// Waits until `predicate` holds for the standard output (or, with `onStandardError`, error) written so far
    /// (true), its output has closed without that (false), or `timeout` passes (false).
    package func waitForOutput(
        onStandardError: Bool = false, timeout: Duration, _ predicate: @escaping @Sendable (String) -> Bool
    ) async -> Bool {
        let read: @Sendable (State) -> [UInt8] = { onStandardError ? $0.stderr : $0.stdout }
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        let wait = Task {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state -> Bool? in
                    if predicate(String(decoding: read(state), as: UTF8.self)) { return true }
                    if state.outputClosed { return false }
                    state.waiters[id] = (onStandardError, predicate, continuation)
                    return nil
                }
                if let now { continuation.resume(returning: now) }
            }
        }
        let timer = Task {
            guard (try? await Task.sleep(for: timeout)) != nil else { return }
            state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume(returning: false)
        }
        defer { timer.cancel() }
        let satisfied = await wait.value
        return satisfied || predicate(onStandardError ? stderrSoFar : stdoutSoFar)
    }

    /// Sends SIGINT.
    package func interrupt() { commands.yield(.signal(.interrupt)) }

    /// Sends SIGTERM.
    package func terminate() { commands.yield(.signal(.terminate)) }

    /// Waits until the process has ended and its output has closed; after `deadline` its group is killed with
    /// SIGKILL (and the result says so).
    package func finish(deadline: Duration = .seconds(30)) async -> CLIResult {
        commands.yield(.finish(deadline: deadline))
        commands.finish()
        return await run.value
    }
}

extension Duration {
    package var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) * 1e-18
    }
}

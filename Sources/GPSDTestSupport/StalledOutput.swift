package import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// An output that nobody reads, for a program run on it: a pipe of one page (4 KiB; full from the start if
/// asked), or a terminal (a pty whose master nobody reads). A test starts the program on it with ``start(_:_:)``,
/// waits until its writes stall, signals it, and reads what was written once it has ended.
package final class StalledOutput: @unchecked Sendable {
    package enum Kind: Sendable {
        /// A pipe of one page; `full`: filled before the program starts, so that its first write waits.
        case pipe(full: Bool)
        /// A terminal of 120 × 40: the program's standard input and output.
        case terminal
    }

    /// The end the test reads (the pipe's read end, the pty's master), and the one the program writes to.
    private let readEnd: Int32
    private let writeEnd: Int32
    private let isTerminal: Bool
    /// The terminal opened once more, without blocking: a write of its own tells whether it is full.
    private let probe: Int32
    /// Bytes put in before the program started (a full pipe).
    package let prefilled: Int
    private var readEndClosed = false

    package init(_ kind: Kind) throws {
        switch kind {
        case .pipe(let full):
            var ends: [Int32] = [-1, -1]
            guard pipe(&ends) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
            (readEnd, writeEnd, isTerminal, probe) = (ends[0], ends[1], false, -1)
            _ = fcntl(writeEnd, 1031 /* F_SETPIPE_SZ */, 4096)
            var count = 0
            if full {
                _ = fcntl(writeEnd, F_SETFL, O_NONBLOCK)
                let page = [UInt8](repeating: UInt8(ascii: "#"), count: 512)
                while true {
                    let written = write(writeEnd, page, page.count)
                    guard written > 0 else { break }
                    count += written
                }
                _ = fcntl(writeEnd, F_SETFL, 0)
            }
            prefilled = count
        case .terminal:
            // posix_openpt, unlockpt and ptsname, as glibc does them: Swift's Glibc module leaves them out.
            let master = open("/dev/ptmx", O_RDWR | O_NOCTTY)
            var unlock: Int32 = 0, number: UInt32 = 0
            guard master >= 0, ioctl(master, 0x4004_5431 /* TIOCSPTLCK */, &unlock) == 0,
                  ioctl(master, 0x8004_5430 /* TIOCGPTN */, &number) == 0 else {
                throw POSIXError(.init(rawValue: errno) ?? .EIO)
            }
            let slave = open("/dev/pts/\(number)", O_RDWR | O_NOCTTY)
            guard slave >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
            var size = winsize(ws_row: 40, ws_col: 120, ws_xpixel: 0, ws_ypixel: 0)
            _ = ioctl(slave, UInt(TIOCSWINSZ), &size)
            (readEnd, writeEnd, isTerminal, prefilled) = (master, slave, true, 0)
            probe = open("/dev/pts/\(number)", O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)
        }
        for fd in [readEnd, writeEnd] { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    }

    deinit {
        if !readEndClosed { close(readEnd) }
        close(writeEnd)
        if probe >= 0 { close(probe) }
    }

    /// How many bytes wait to be read.
    package var waiting: Int {
        var count: Int32 = 0
        return ioctl(readEnd, UInt(FIONREAD), &count) == 0 ? Int(count) : 0
    }

    /// Waits until the output is full: a pipe holds `least` bytes or more and has stopped growing (the same at
    /// two looks `quiet` apart); a terminal takes no more (a write of a NUL, which shows nothing, would block:
    /// its master's count stops at 4 KiB, well before it is full). False after `timeout`.
    package func waitUntilStalled(
        least: Int, quiet: Duration = .milliseconds(500), timeout: Duration = .seconds(60)
    ) async throws -> Bool {
        let end = ContinuousClock.now + timeout
        var last = -1
        while ContinuousClock.now < end {
            if isTerminal {
                var nul: UInt8 = 0
                if write(probe, &nul, 1) < 0, errno == EAGAIN { return true }
            } else {
                let now = waiting
                if now >= least, now == last { return true }
                last = now
            }
            try await Task.sleep(for: isTerminal ? .milliseconds(50) : quiet)   // between two looks, not a wait
        }
        return false
    }

    /// Closes the terminal's master: the terminal hangs up, and the program's reads and writes fail with EIO.
    package func hangUp() {
        precondition(isTerminal, "only a terminal hangs up")
        close(readEnd)
        readEndClosed = true
    }

    /// What was written, read once the program has ended (without the bytes put in first).
    package func readAll() -> [UInt8] {
        _ = fcntl(readEnd, F_SETFL, O_NONBLOCK)
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = read(readEnd, &chunk, chunk.count)
            guard count > 0 else { break }
            bytes += chunk[..<count]
        }
        return Array(bytes.dropFirst(prefilled))
    }

    /// A program started on this output: its standard output (and, for a terminal, its standard input) here,
    /// its standard error too or a pipe of its own that is read, in a process group of its own, with the
    /// signals at their defaults.
    package final class Run: @unchecked Sendable {
        package let pid: pid_t
        private let errors: Int32
        private var collected: [UInt8] = []

        fileprivate init(pid: pid_t, errors: Int32) {
            (self.pid, self.errors) = (pid, errors)
        }

        deinit {
            if CLIProcess.isRunning(pid) { kill(pid, SIGKILL) }
            var status: Int32 = 0
            _ = waitpid(pid, &status, WNOHANG)
            close(errors)
        }

        /// How the program ended, and how long after the signal.
        package struct Ending: Sendable, CustomStringConvertible {
            /// The exit status, or the signal that ended it.
            package var status: Int32
            package var bySignal: Bool
            /// From the signal (or the call) to the moment it had been reaped; nil if it had to be killed.
            package var after: Duration?
            package var stderr: String

            package var description: String {
                guard let after else { return "NOT ENDED (killed); stderr: \(stderr)" }
                return "\(bySignal ? "signal" : "status") \(status) \(after) after the signal; stderr: \(stderr)"
            }
        }

        /// Whether it has begun to write to its standard output: it has opened that pipe or terminal again (as
        /// ProcessEnd's `BoundedOutput` does at its first write), a descriptor beside 1 and 2 naming the same.
        package var hasOpenedItsOutputAgain: Bool {
            let directory = "/proc/\(pid)/fd"
            guard let output = try? FileManager.default.destinationOfSymbolicLink(atPath: directory + "/1"),
                  let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return false }
            return names.contains { name in
                name != "1" && name != "2"
                    && (try? FileManager.default.destinationOfSymbolicLink(atPath: directory + "/" + name)) == output
            }
        }

        /// Sends `signal` (none if nil), then waits until the program has ended (reaped with waitpid, polled every
        /// 10 ms); kills its group after `deadline`.
        package func end(by signal: Int32?, deadline: Duration = .seconds(10)) async -> Ending {
            let sent = ContinuousClock.now
            if let signal { kill(pid, signal) }
            var status: Int32 = 0
            while true {
                let reaped = waitpid(pid, &status, WNOHANG)
                if reaped == pid { break }
                if ContinuousClock.now - sent > deadline {
                    kill(-pid, SIGKILL)
                    _ = waitpid(pid, &status, 0)
                    return Ending(status: -1, bySignal: false, after: nil, stderr: drainErrors())
                }
                try? await Task.sleep(for: .milliseconds(10))   // polling waitpid, not a wait for the end
            }
            let after = ContinuousClock.now - sent
            let signalled = status & 0x7F != 0
            return Ending(status: signalled ? status & 0x7F : (status >> 8) & 0xFF, bySignal: signalled, after: after,
                          stderr: drainErrors())
        }

        /// Whether it catches `signal` now (`SigCgt` in /proc/PID/status): its handler is installed.
        package func catches(_ signal: Int32) -> Bool {
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
                  let line = status.split(separator: "\n").first(where: { $0.hasPrefix("SigCgt:") }),
                  let mask = UInt64(line.dropFirst(7).trimmingCharacters(in: .whitespaces), radix: 16) else { return false }
            return mask & (1 << UInt64(signal - 1)) != 0
        }

        /// What it wrote to standard error so far.
        package func drainErrors() -> String {
            var chunk = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = read(errors, &chunk, chunk.count)
                guard count > 0 else { break }
                collected += chunk[..<count]
            }
            return String(decoding: collected, as: UTF8.self)
        }
    }

    /// Starts `executable` with `arguments` on this output (with `errorsToo`, its standard error as well).
    package func start(_ executable: URL, _ arguments: [String], errorsToo: Bool = false) throws -> Run {
        var errorEnds: [Int32] = [-1, -1]
        guard pipe(&errorEnds) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        _ = fcntl(errorEnds[0], F_SETFL, O_NONBLOCK)
        _ = fcntl(errorEnds[0], F_SETFD, FD_CLOEXEC)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if isTerminal {
            posix_spawn_file_actions_adddup2(&actions, writeEnd, STDIN_FILENO)
        } else {
            posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
        }
        posix_spawn_file_actions_adddup2(&actions, writeEnd, STDOUT_FILENO)
        posix_spawn_file_actions_adddup2(&actions, errorsToo ? writeEnd : errorEnds[1], STDERR_FILENO)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t(), none = sigset_t()
        sigfillset(&defaults)
        sigemptyset(&none)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        var pid = pid_t()
        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        let result = posix_spawn(&pid, executable.path, &actions, &attributes, argv, environ)
        close(errorEnds[1])
        guard result == 0 else {
            close(errorEnds[0])
            throw POSIXError(.init(rawValue: result) ?? .EIO)
        }
        return Run(pid: pid, errors: errorEnds[0])
    }
}

#if canImport(Glibc)
package import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Starting, watching and killing gpsfake as the leader of its own process group.
///
/// Foundation's `Process` cannot put the child in a new process group, and gpsfake ignores SIGTERM while its gpsd
/// is a grandchild of ours: only `kill(-pgid, SIGKILL)` ends both. Everything here is a thin wrapper over POSIX
/// calls; the few Linux-only parts (`/proc`) degrade to "unknown" elsewhere.
package enum ProcessGroup {
    package struct SpawnError: Error, CustomStringConvertible {
        package let function: String
        package let errno: Int32

        package var description: String { "\(function): \(String(cString: strerror(errno)))" }
    }

    /// Where a child's standard output or error goes.
    package enum Destination {
        /// Appended to a file, created if need be.
        case file(String)
        /// A descriptor of this process (the write end of a pipe), duplicated onto the child's.
        case descriptor(Int32)
    }

    /// Spawns `path` as the leader of a new process group (its pgid is its pid) with stdin from /dev/null and
    /// stdout/stderr sent where asked, the signal mask and dispositions reset as a shell would give them, and
    /// no inherited descriptors beyond 0, 1, 2 where the C library can close them.
    package static func spawn(
        path: String, arguments: [String], environment: [String: String],
        standardOutput: Destination, standardError: Destination
    ) throws(SpawnError) -> pid_t {
        var attributes = posix_spawnattr_t()
        var actions = posix_spawn_file_actions_t()
        try check("posix_spawnattr_init", posix_spawnattr_init(&attributes))
        defer { posix_spawnattr_destroy(&attributes) }
        try check("posix_spawn_file_actions_init", posix_spawn_file_actions_init(&actions))
        defer { posix_spawn_file_actions_destroy(&actions) }

        let flags = POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF
        try check("posix_spawnattr_setflags", posix_spawnattr_setflags(&attributes, Int16(flags)))
        try check("posix_spawnattr_setpgroup", posix_spawnattr_setpgroup(&attributes, 0))
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        try check("posix_spawnattr_setsigmask", posix_spawnattr_setsigmask(&attributes, &noSignals))
        // Ignored signals survive exec: a test process that ignores SIGPIPE (libgps makes it) must not pass that
        // on to gpsd, or to a whereami under test, which a shell would start with SIGPIPE at its default.
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGINT, SIGTERM, SIGQUIT, SIGHUP, SIGCHLD, SIGUSR1, SIGUSR2, SIGALRM] {
            sigaddset(&defaults, signal)
        }
        try check("posix_spawnattr_setsigdefault", posix_spawnattr_setsigdefault(&attributes, &defaults))

        try check("addopen stdin", posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0))
        for (fd, destination) in [(Int32(1), standardOutput), (2, standardError)] {
            switch destination {
            case .file(let path):
                let mode = O_WRONLY | O_CREAT | O_APPEND
                try check("addopen \(fd)", posix_spawn_file_actions_addopen(&actions, fd, path, mode, 0o644))
            case .descriptor(let source):
                try check("adddup2 \(fd)", posix_spawn_file_actions_adddup2(&actions, source, fd))
            }
        }
        if let addCloseFrom = closeFromAction {
            // libgps opens its sockets without O_CLOEXEC: don't let a child inherit a test's client connections.
            try check("posix_spawn_file_actions_addclosefrom_np", addCloseFrom(&actions, 3))
        }

        let argv = ([path] + arguments).map { strdup($0) }
        defer { argv.forEach { free($0) } }
        let envp = environment.map { strdup("\($0.key)=\($0.value)") }
        defer { envp.forEach { free($0) } }
        var pid: pid_t = 0
        let result = (argv + [nil]).withUnsafeBufferPointer { argvBuffer in
            (envp + [nil]).withUnsafeBufferPointer { envpBuffer in
                posix_spawn(&pid, path, &actions, &attributes, argvBuffer.baseAddress!, envpBuffer.baseAddress!)
            }
        }
        try check("posix_spawn", result)
        return pid
    }

    private static func check(_ function: String, _ result: Int32) throws(SpawnError) {
        if result != 0 { throw SpawnError(function: function, errno: result) }
    }

    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    /// glibc ≥ 2.34's `posix_spawn_file_actions_addclosefrom_np`, looked up at run time (it is a GNU extension
    /// that Swift's Glibc module does not declare).
    private static let closeFromAction: AddCloseFrom? = {
        #if os(Linux)
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np")
        else { return nil }
        return unsafeBitCast(symbol, to: AddCloseFrom.self)
        #else
        return nil
        #endif
    }()

    /// Whether the child has exited, without reaping it (a zombie keeps its pid and process group reserved, so a
    /// later `kill(-pgid, …)` cannot hit an unrelated group). Returns the wait status if it has exited.
    static func exitStatus(ofUnreaped pid: pid_t) -> Int32? {
        var info = siginfo_t()
        guard waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 else { return nil }
        #if os(Linux)
        guard info._sifields._sigchld.si_pid == pid else { return nil }
        let status = info._sifields._sigchld.si_status
        return info.si_code == CLD_EXITED ? (status & 0xff) << 8 : status & 0x7f
        #else
        guard info.si_pid == pid else { return nil }
        return info.si_code == CLD_EXITED ? (info.si_status & 0xff) << 8 : info.si_status & 0x7f
        #endif
    }

    /// Ends gpsfake and its gpsd: SIGKILL to the whole group, then reap gpsfake.
    ///
    /// First a SIGTERM to gpsfake alone (bounded to 0.5 s): its handler kills gpsd *and reaps it*. gpsd is
    /// gpsfake's child, not ours; killed together with gpsfake it would be an orphaned zombie until init reaps it,
    /// which some container inits do only every second or two. The SIGKILL then ends whatever is left.
    static func killAndReap(_ pid: pid_t) {
        if exitStatus(ofUnreaped: pid) == nil {
            _ = kill(pid, SIGTERM)
            waitUntil(timeout: .milliseconds(500)) { (members(of: pid) ?? []).allSatisfy { $0 == pid } }
        }
        _ = kill(-pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
    }

    private static func waitUntil(timeout: Duration, _ condition: () -> Bool) {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while !condition() && clock.now < deadline {
            usleep(2_000)
        }
    }

    /// Waits (bounded) until no process of the group is left, zombies included. Normally there is none by now;
    /// if gpsfake could not reap its gpsd, the orphan is init's to reap.
    static func waitUntilEmpty(_ pgid: pid_t, timeout: Duration) {
        waitUntil(timeout: timeout) { members(of: pgid)?.isEmpty ?? true }
    }

    /// The pids in process group `pgid` (from /proc; nil where there is no /proc).
    static func members(of pgid: pid_t) -> [pid_t]? {
        guard let directory = opendir("/proc") else { return nil }
        defer { closedir(directory) }
        var pids: [pid_t] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let pid = pid_t(name), let stat = ProcFile.read("/proc/\(pid)/stat"),
                  let close = stat.lastIndex(of: ")") else { continue }
            // after "pid (comm)": state ppid pgrp …
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 2, pid_t(fields[2]) == pgid { pids.append(pid) }
        }
        return pids
    }

    /// Whether a process of group `pgid` holds the socket listening on 127.0.0.1:`port`. nil: can't tell here.
    static func groupListens(_ pgid: pid_t, onLoopbackPort port: UInt16) -> Bool? {
        guard let table = ProcFile.read("/proc/net/tcp"), let members = members(of: pgid) else { return nil }
        let wanted = String(port, radix: 16, uppercase: true)
        var inodes: Set<Substring> = []
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            guard fields.count > 9, fields[3] == "0A" else { continue }       // 0A: TCP_LISTEN
            let local = fields[1].split(separator: ":")
            guard local.count == 2, local[0] == "0100007F" || local[0] == "00000000",
                  UInt16(local[1], radix: 16) == port || local[1] == wanted else { continue }
            inodes.insert(fields[9])
        }
        guard !inodes.isEmpty else { return false }
        for pid in members {
            guard let fds = opendir("/proc/\(pid)/fd") else { continue }
            defer { closedir(fds) }
            while let entry = readdir(fds) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                var buffer = [CChar](repeating: 0, count: 64)
                let count = readlink("/proc/\(pid)/fd/\(name)", &buffer, buffer.count - 1)
                guard count > 0 else { continue }
                let target = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
                if target.hasPrefix("socket:["), inodes.contains(target.dropFirst(8).dropLast()) { return true }
            }
        }
        return false
    }
}

/// Reading small files that report size 0 (procfs) or grow while we read (gpsfake's stderr).
enum ProcFile {
    static func read(_ path: String) -> String? {
        guard let bytes = readBytes(path) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func readBytes(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = chunk.withUnsafeMutableBytes { systemRead(fd, $0.baseAddress, $0.count) }
            if count > 0 {
                bytes += chunk[..<count]
            } else if count == 0 || errno != EINTR {
                return count == 0 ? bytes : nil
            }
        }
    }
}

#if canImport(Glibc)
private let systemRead = Glibc.read
#elseif canImport(Musl)
private let systemRead = Musl.read
#elseif canImport(Darwin)
private let systemRead = Darwin.read
#endif

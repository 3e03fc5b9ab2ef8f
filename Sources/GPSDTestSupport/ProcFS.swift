#if canImport(Glibc)
import Glibc
#endif

/// What swift-subprocess does not tell: which processes of a group are still there (gpsfake's gpsd is its
/// child, not ours), whether one of them listens on a port, and whether a process has exited but is not yet
/// reaped. All read from Linux's `/proc`; nil where there is none.
enum ProcFS {
    /// The pids in process group `pgid`, zombies included.
    static func members(of pgid: pid_t) -> [pid_t]? {
        guard let directory = opendir("/proc") else { return nil }
        defer { closedir(directory) }
        var pids: [pid_t] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let pid = pid_t(name), let fields = statFields(of: pid), fields.count > 2 else { continue }
            if pid_t(fields[2]) == pgid { pids.append(pid) }   // after "pid (comm)": state ppid pgrp …
        }
        return pids
    }

    /// Whether `pid` has ended: gone, or a zombie waiting to be reaped.
    static func hasEnded(_ pid: pid_t) -> Bool {
        guard let fields = statFields(of: pid) else { return true }
        return fields.first == "Z" || fields.first == "X"
    }

    /// The command name of `pid` (`/proc/PID/comm`, at most 15 bytes), without its newline.
    static func command(of pid: pid_t) -> String? {
        ProcFile.read("/proc/\(pid)/comm").map { String($0.prefix { $0 != "\n" }) }
    }

    /// The fields of `/proc/PID/stat` after "pid (comm)".
    private static func statFields(of pid: pid_t) -> [Substring]? {
        guard let stat = ProcFile.read("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else { return nil }
        return stat[stat.index(after: close)...].split(separator: " ")
    }

    /// Whether a process of group `pgid` holds the socket listening on 127.0.0.1:`port`.
    static func groupListens(_ pgid: pid_t, onLoopbackPort port: UInt16) -> Bool? {
        guard let table = ProcFile.read("/proc/net/tcp"), let members = members(of: pgid) else { return nil }
        var inodes: Set<Substring> = []
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            guard fields.count > 9, fields[3] == "0A" else { continue }       // 0A: TCP_LISTEN
            let local = fields[1].split(separator: ":")
            guard local.count == 2, local[0] == "0100007F" || local[0] == "00000000",
                  UInt16(local[1], radix: 16) == port else { continue }
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
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count > 0 {
                bytes += chunk[..<count]
            } else if count == 0 || errno != EINTR {
                return count == 0 ? bytes : nil
            }
        }
    }
}

import Foundation

/// Holds gpsfake's logs back until a client is watching, so that client sees every sentence from the first.
///
/// gpsfake starts gpsd first and only then opens its logs. Each log is handed to it as a named pipe, so gpsfake
/// blocks in `open()` with gpsd already listening. gpsd runs with `-D 2` and writes every reply to a client into
/// gpsfake's stderr; once the reply to a `?WATCH={"enable":true…}` appears there, each pipe is released:
///
/// 1. open the pipe's write end (possible as soon as gpsfake waits in `open()` for it),
/// 2. put a regular copy of the log in the pipe's place (rename),
/// 3. close the write end: gpsfake's first read gets an empty file, and it reopens the path by name to read the
///    packets, which now gives it the copy. (gpsfake 3.22 reads every log twice; the first read only serves its
///    `Delay-Cookie` re-splitting, which NMEA logs don't use.)
///
/// No data goes through the pipe, so nothing can block or raise SIGPIPE if gpsfake dies meanwhile.
struct LogGate: Sendable {
    struct Entry: Sendable {
        let pipe: String
        let source: String
    }

    /// The reply gpsd sends once a watch is in effect (logged by `gpsd -D 2` as `=> client(N): …`).
    static let watchReply = Array(#"{"class":"WATCH","enable":true"#.utf8)

    let entries: [Entry]

    /// Makes one named pipe per log in `directory`; the returned gate's `entries[i].pipe` replaces `logs[i]`.
    static func prepare(logs: [URL], in directory: String) throws -> LogGate {
        var entries: [Entry] = []
        for (index, log) in logs.enumerated() {
            let pipe = "\(directory)/\(index)-\(log.lastPathComponent)"
            guard mkfifo(pipe, 0o600) == 0 else {
                throw GPSFakeError(.setupFailed, "mkfifo \(pipe)", errno: errno)
            }
            entries.append(Entry(pipe: pipe, source: log.path))
        }
        return LogGate(entries: entries)
    }

    /// Blocks until a client watches (seen in `standardError`), then releases every log in order. Returns early,
    /// releasing nothing more, once `cancelled()` is true.
    func run(standardError: String, cancelled: @Sendable () -> Bool) {
        while !Self.contains(ProcFile.readBytes(standardError) ?? [], Self.watchReply) {
            if cancelled() { return }
            usleep(5_000)
        }
        for entry in entries {
            guard release(entry, cancelled: cancelled) else { return }
        }
    }

    private func release(_ entry: Entry, cancelled: @Sendable () -> Bool) -> Bool {
        var fd: Int32
        repeat {
            // Succeeds once gpsfake is blocked opening the pipe for reading (ENXIO until then).
            fd = open(entry.pipe, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
            if fd >= 0 { break }
            if errno != ENXIO && errno != EINTR || cancelled() { return false }
            usleep(2_000)
        } while true
        defer { close(fd) }
        let copy = entry.pipe + ".log"
        do {
            try FileManager.default.copyItem(atPath: entry.source, toPath: copy)
        } catch {
            return false
        }
        return rename(copy, entry.pipe) == 0
    }

    private static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard haystack.count >= needle.count, let first = needle.first else { return false }
        var index = 0
        while index <= haystack.count - needle.count {
            if haystack[index] == first && haystack[index..<(index + needle.count)].elementsEqual(needle) {
                return true
            }
            index += 1
        }
        return false
    }
}

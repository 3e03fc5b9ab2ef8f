#if canImport(Glibc)
import Glibc
#endif

/// A pipe that wakes a thread waiting in `poll(2)`: any thread ``wake()``s it, the waiting thread polls ``fd`` with
/// its socket and ``drain()``s it when it is readable. Both ends are non-blocking, so a wake never blocks, however
/// many come before the waiter drains them (a full pipe already wakes it).
final class WakePipe: Sendable {
    /// The end to poll for reading.
    let fd: Int32
    private let writeEnd: Int32

    init() throws(UplinkError) {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw .system("pipe", errno) }
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        fd = ends[0]
        writeEnd = ends[1]
    }

    /// Wakes the waiter (async-signal-safe: one write(2)).
    func wake() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    /// Empties the pipe.
    func drain() {
        var bytes = [UInt8](repeating: 0, count: 64)
        while read(fd, &bytes, bytes.count) > 0 {}
    }

    /// Waits until woken or `timeout` has passed (nil: no limit).
    func wait(timeout: Duration?) {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        _ = poll(&entry, 1, timeout.map(milliseconds) ?? -1)
        drain()
    }

    deinit {
        close(fd)
        close(writeEnd)
    }
}

/// A duration as poll(2)'s timeout: whole milliseconds, rounded up, at most a day.
func milliseconds(_ duration: Duration) -> Int32 {
    let (seconds, attoseconds) = duration.components
    guard seconds >= 0 else { return 0 }
    guard seconds < 86_400 else { return 86_400_000 }
    return Int32(seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
}

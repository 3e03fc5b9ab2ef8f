import Glibc
import GPSDSystem

/// A pipe that wakes a thread blocked in poll(2): how a reader thread learns that its session is closing, or
/// that a command is waiting to be sent, without timeouts or busy loops. Also an interruptible sleep.
final class WakePipe: Sendable {
    private let readEnd: Int32
    private let writeEnd: Int32

    /// Takes over the two ends of a non-blocking pipe.
    init(_ ends: (readEnd: Int32, writeEnd: Int32)) {
        (readEnd, writeEnd) = ends
    }

    /// A new pipe.
    /// - Throws: the failed `pipe2` (too many open files, say).
    convenience init() throws(SystemError) {
        self.init(try Syscall.pipe())
    }

    deinit {
        Syscall.close(readEnd)
        Syscall.close(writeEnd)
    }

    /// Wakes the waiting thread. Safe from any thread, any number of times; a full pipe already holds a wake.
    func signal() {
        // Only a full pipe (nil) can stop the write; it holds a wake already, so nothing is lost.
        _ = try? Syscall.write(writeEnd, [1])
    }

    /// Waits until `fd` (if any) is ready for `events` (or closed, or in error), the pipe is signalled, or
    /// `timeout` passes (`nil`: no limit). Returns whether `fd` is ready; a read or write will tell how.
    func wait(for fd: Int32?, events: Int16 = Int16(POLLIN), timeout: Duration?) throws(SystemError) -> Bool {
        var fds = [pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)]
        if let fd { fds.append(pollfd(fd: fd, events: events, revents: 0)) }
        let count = try Syscall.poll(&fds, milliseconds: timeout.map(Self.milliseconds) ?? -1)
        guard count > 0 else { return false }
        if fds[0].revents != 0 { drain() }
        return fds.count > 1 && fds[1].revents != 0
    }

    /// A timeout for poll(2), rounded up to the millisecond; anything past about 24 days waits without limit.
    static func milliseconds(_ duration: Duration) -> Int32 {
        // Bounded before `components`, which traps beyond Int64.max seconds either way.
        guard duration > .zero else { return 0 }
        guard duration < .seconds(Int32.max / 1000) else { return -1 }
        let (seconds, attoseconds) = duration.components
        let whole = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        return Int32(whole + (attoseconds % 1_000_000_000_000_000 > 0 ? 1 : 0))
    }

    /// Empties the pipe; it is non-blocking, so this ends at the first read that finds it empty.
    private func drain() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while let count = try? Syscall.read(readEnd, into: &buffer), count > 0 {}
    }
}

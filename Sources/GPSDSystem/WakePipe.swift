public import Glibc

/// A pipe that wakes a thread blocked in poll(2): how a reader thread learns that its session is closing, or
/// that a command is waiting to be sent, without timeouts or busy loops. Also an interruptible sleep.
///
/// ```swift
/// let wake = try WakePipe()
/// // The waiting thread:
/// let ready = try wake.poll(socket, events: Int16(POLLIN), timeout: .seconds(1))
/// // Any other thread, any number of times:
/// wake.signal()
/// ```
public final class WakePipe: Sendable {
    private let readEnd: Int32
    private let writeEnd: Int32

    /// Takes over the two ends of a non-blocking pipe.
    public init(_ ends: (readEnd: Int32, writeEnd: Int32)) {
        (readEnd, writeEnd) = ends
    }

    /// A new pipe.
    /// - Throws: the failed `pipe2` (too many open files, say).
    public convenience init() throws(SystemError) {
        self.init(try Syscall.pipe())
    }

    deinit {
        Syscall.close(readEnd)
        Syscall.close(writeEnd)
    }

    /// Wakes the waiting thread. Safe from any thread, any number of times; a full pipe already holds a wake.
    public func signal() {
        // Only a full pipe (nil) can stop the write; it holds a wake already, so nothing is lost.
        _ = try? Syscall.write(writeEnd, [1])
    }

    /// Waits until `fd` (if any) is ready for `events` (or closed, or in error), the pipe is signalled, or
    /// `timeout` passes (`nil`: no limit). Returns whether `fd` is ready; a read or write will tell how.
    public func wait(for fd: Int32?, events: Int16 = Int16(POLLIN), timeout: Duration?) throws(SystemError) -> Bool {
        try poll(fd, events: events, timeout: timeout) != 0
    }

    /// Like ``wait(for:events:timeout:)``, returning what poll(2) said of `fd` (its `revents`: 0 when it is not
    /// ready), for a caller that waits for reading and writing at once.
    public func poll(_ fd: Int32?, events: Int16, timeout: Duration?) throws(SystemError) -> Int16 {
        var fds = [pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)]
        if let fd { fds.append(pollfd(fd: fd, events: events, revents: 0)) }
        let count = try Syscall.poll(&fds, milliseconds: Syscall.pollTimeout(timeout))
        guard count > 0 else { return 0 }
        if fds[0].revents != 0 { drain() }
        return fds.count > 1 ? fds[1].revents : 0
    }

    /// Empties the pipe; it is non-blocking, so this ends at the first read that finds it empty.
    private func drain() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while let count = try? Syscall.read(readEnd, into: &buffer), count > 0 {}
    }
}

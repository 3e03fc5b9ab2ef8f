import Foundation
import Glibc

/// A pipe that wakes a thread blocked in poll(2): how a source's thread learns it must stop, or that a
/// command is waiting, without timeouts or busy loops. Also an interruptible sleep.
final class WakePipe: Sendable {
    private let readEnd: Int32
    private let writeEnd: Int32

    init() {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { fatalError("pipe failed: \(errno)") }
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        readEnd = fds[0]
        writeEnd = fds[1]
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }

    /// Wakes the waiting thread. Safe from any thread, any number of times.
    func signal() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    /// Waits until `fd` (if any) is readable, the pipe is signalled, or `timeout` passes (`nil`: forever).
    /// Returns whether `fd` is readable (or closed, or in error: a read will tell).
    func wait(readable fd: Int32?, timeout: Duration?) -> Bool {
        var fds = [pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)]
        if let fd { fds.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0)) }
        let milliseconds: Int32 = timeout.map { duration in
            let (seconds, attoseconds) = duration.components
            guard seconds < Int64(Int32.max / 1000) else { return Int32.max }  // about 24 days: wait on
            let ms = max(0, seconds * 1000 + attoseconds / 1_000_000_000_000_000)
            return Int32(clamping: ms + (attoseconds % 1_000_000_000_000_000 > 0 ? 1 : 0))
        } ?? -1
        let count = poll(&fds, nfds_t(fds.count), milliseconds)
        guard count > 0 else { return false }
        if fds[0].revents != 0 { drain() }
        return fds.count > 1 && fds[1].revents != 0
    }

    private func drain() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while read(readEnd, &buffer, buffer.count) > 0 {}
    }
}

/// Splits a byte stream into lines (LF or CRLF), dropping lines longer than `limit` bytes.
struct LineSplitter {
    let limit: Int
    private var pending: [UInt8] = []
    private var overflowing = false

    init(limit: Int = 64 * 1024) { self.limit = limit }

    /// Feeds bytes; calls `line` for each complete line (without its terminator) and `skipped` for each line
    /// that was too long.
    mutating func append(
        _ bytes: UnsafeRawBufferPointer, line: (ArraySlice<UInt8>) -> Void, skipped: () -> Void
    ) {
        var start = bytes.startIndex
        while let newline = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) {
            if overflowing || pending.count + (newline - start) > limit {
                overflowing = false
                skipped()
            } else {
                pending.append(contentsOf: bytes[start..<newline])
                if pending.last == UInt8(ascii: "\r") { pending.removeLast() }
                if !pending.isEmpty { line(pending[...]) }
            }
            pending.removeAll(keepingCapacity: true)
            start = newline + 1
        }
        guard !overflowing else { return }
        pending.append(contentsOf: bytes[start...])
        if pending.count > limit {
            pending.removeAll(keepingCapacity: true)
            overflowing = true
        }
    }

    /// The last line of a stream that did not end with a newline.
    mutating func finish(line: (ArraySlice<UInt8>) -> Void, skipped: () -> Void) {
        if overflowing { skipped() } else if !pending.isEmpty { line(pending[...]) }
        pending.removeAll()
        overflowing = false
    }
}

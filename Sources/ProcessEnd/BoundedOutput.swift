import Glibc
import GPSDSystem

/// Standard output or standard error, written with write(2) (every line goes at once, no stdio buffer), never
/// waiting past an ``EndRequest``.
///
/// While the descriptor takes nothing (a full pipe whose reader stopped, a stalled terminal) a write waits with
/// poll(2) for room, as long as it takes, or for the request: from then on it waits ``EndRequest/outputGrace``
/// at most after the request, and then gives up (``Failure/abandoned``). To wait without blocking in write(2)
/// itself, it writes through a descriptor of its own that does not block: the same pipe or terminal opened again
/// (`/proc/self/fd/N`, its own file description, so the one the process shares with its shell stays blocking),
/// or `send` with `MSG_DONTWAIT` on a socket. A regular file never waits long and is written directly.
///
/// A text longer than a pipe's atomic write (`PIPE_BUF`, 4096 bytes) goes in pieces that end at a line's end
/// where one does: a pipe takes each whole or not at all, so giving up cuts no line that did not have to be.
package struct BoundedOutput: Sendable {
    /// Writing failed, or stopped at the end.
    package struct Failure: Error, Sendable {
        /// `errno` of the failed write; `ETIME` when the output took nothing for the grace after the end request.
        package var number: Int32
        /// The reader went away (`EPIPE`).
        package var readerWentAway: Bool { number == EPIPE }
        /// An end was requested, and the output took nothing until its grace had passed: what was left is lost.
        package var abandoned: Bool { number == ETIME }

        package init(number: Int32) { self.number = number }
    }

    package static let standardOutput = BoundedOutput(STDOUT_FILENO)
    package static let standardError = BoundedOutput(STDERR_FILENO)

    private enum Kind: Sendable {
        /// A regular file, a block device, or what is not an output at all (a closed standard output's number
        /// taken by another descriptor): written directly, so a write that cannot be fails at once.
        case file
        /// A socket: `send` with `MSG_DONTWAIT`.
        case socket
        /// A pipe or a terminal (or another character device), opened again without blocking.
        case reopened(Int32)
        /// A pipe or terminal that could not be opened again (another user's, after su; no /proc): polled for
        /// room, then written directly, so a write may still block, for the end request's limit at most.
        case direct
    }

    /// The descriptor written (1 or 2).
    package let descriptor: Int32
    private let kind: Kind

    private init(_ descriptor: Int32) {
        self.descriptor = descriptor
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            kind = .direct
            return
        }
        switch status.st_mode & S_IFMT {
        case S_IFIFO, S_IFCHR:
            let again = open("/proc/self/fd/\(descriptor)", O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
            kind = again >= 0 ? .reopened(again) : .direct
        case S_IFSOCK: kind = .socket
        default: kind = .file
        }
    }

    /// A descriptor of the same output that does not block, where there is one, else the output's own: for what
    /// a signal handler writes (after poll(2) says it takes it).
    package var nonBlockingDescriptor: Int32 {
        if case .reopened(let fd) = kind { return fd }
        return descriptor
    }

    package func write(_ text: String) throws(Failure) {
        var text = text
        let failure = text.withUTF8 { bytes -> Failure? in
            do throws(Failure) {
                try write(UnsafeRawBufferPointer(bytes))
                return nil
            } catch {
                return error
            }
        }
        if let failure { throw failure }
    }

    package func write(_ bytes: UnsafeRawBufferPointer) throws(Failure) {
        var rest = bytes[...]
        // Once the grace has passed, a write gets one more look at the output, and then gives up.
        var lastLook = false
        while !rest.isEmpty {
            // A write that may block is made only once poll(2) has said there is room.
            if case .direct = kind { lastLook = try waitForRoom(lastLook: lastLook) }
            let piece = Self.piece(of: rest)
            let count = UnsafeRawBufferPointer(rebasing: piece).withMemoryRebound(to: UInt8.self) { writeOnce($0) }
            if count > 0 {
                rest = rest[(rest.startIndex + count)...]
            } else if count < 0, errno == EAGAIN || errno == EWOULDBLOCK {
                lastLook = try waitForRoom(lastLook: lastLook)
            } else if count < 0, errno != EINTR {
                throw Failure(number: errno)
            }
        }
    }

    /// The first piece of `rest` to write at once: all of it up to `PIPE_BUF` bytes, else up to the last line's
    /// end within them (or `PIPE_BUF` bytes of a line longer than that).
    private static func piece(of rest: Slice<UnsafeRawBufferPointer>) -> Slice<UnsafeRawBufferPointer> {
        let atomic = Int(PIPE_BUF)
        guard rest.count > atomic else { return rest }
        let window = rest.prefix(atomic)
        guard let lastEnd = window.lastIndex(of: UInt8(ascii: "\n")) else { return window }
        return rest[rest.startIndex...lastEnd]
    }

    private func writeOnce(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        switch kind {
        case .socket: send(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL))
        case .reopened(let fd): Glibc.write(fd, bytes.baseAddress, bytes.count)
        case .file, .direct: Glibc.write(descriptor, bytes.baseAddress, bytes.count)
        }
    }

    /// Waits until the output has room, or for the end's grace at most. Once the grace has passed it looks once
    /// (`lastLook` says it has already), and throws ``Failure/abandoned`` unless the output takes something now.
    /// Returns whether that last look was taken.
    private func waitForRoom(lastLook: Bool) throws(Failure) -> Bool {
        let end = EndRequest.active
        var fds = [pollfd(fd: nonBlockingDescriptor, events: Int16(POLLOUT), revents: 0)]
        var wait: Int32 = -1
        if let deadline = end?.outputDeadline {
            wait = Syscall.pollTimeout(until: deadline)
        } else if let end {
            fds.append(pollfd(fd: end.descriptor, events: Int16(POLLIN), revents: 0))
        }
        guard wait == 0 else {
            if poll(&fds, nfds_t(fds.count), wait) < 0, errno != EINTR { throw Failure(number: errno) }
            return false
        }
        guard !lastLook, poll(&fds, 1, 0) == 1, fds[0].revents & Int16(POLLOUT) != 0 else { throw Failure(number: ETIME) }
        return true
    }
}

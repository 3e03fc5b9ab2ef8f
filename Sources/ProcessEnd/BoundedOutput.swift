import Glibc

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
        /// A regular file (or a block device): written directly.
        case file
        /// A socket: `send` with `MSG_DONTWAIT`.
        case socket
        /// A pipe, a terminal or another device, opened again without blocking.
        case reopened(Int32)
        /// One that could not be opened again: polled for room, then written directly (a write may block).
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
        case S_IFREG, S_IFBLK: kind = .file
        case S_IFSOCK: kind = .socket
        default:
            let again = open("/proc/self/fd/\(descriptor)", O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
            kind = again >= 0 ? .reopened(again) : .direct
        }
    }

    /// A descriptor of the same output that never blocks, where there is one (else the output's own): for what
    /// a signal handler writes.
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
        while !rest.isEmpty {
            // A write that may block is made only once poll(2) has said there is room.
            if case .direct = kind { try waitForRoom() }
            let piece = Self.piece(of: rest)
            let count = UnsafeRawBufferPointer(rebasing: piece).withMemoryRebound(to: UInt8.self) { writeOnce($0) }
            if count > 0 {
                rest = rest[(rest.startIndex + count)...]
            } else if count < 0, errno == EAGAIN || errno == EWOULDBLOCK {
                try waitForRoom()
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

    /// Waits until the output has room, or throws ``Failure/abandoned`` once the end's grace has passed.
    private func waitForRoom() throws(Failure) {
        let end = EndRequest.active
        var fds = [pollfd(fd: nonBlockingDescriptor, events: Int16(POLLOUT), revents: 0)]
        var wait: Int32 = -1
        if let deadline = end?.outputDeadline {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { throw Failure(number: ETIME) }
            let (seconds, attoseconds) = left.components
            wait = Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
        } else if let end {
            fds.append(pollfd(fd: end.descriptor, events: Int16(POLLIN), revents: 0))
        }
        if poll(&fds, nfds_t(fds.count), wait) < 0, errno != EINTR { throw Failure(number: errno) }
    }
}

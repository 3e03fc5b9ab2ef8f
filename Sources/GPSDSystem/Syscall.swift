#if !os(Linux)
#error("GPSDLocation supports Linux only: it reads gpsd through Linux's libgps and calls glibc directly.")
#endif

import CLinux
public import Glibc

/// Every system call GPSDLocation and GPSDFleet make, as small wrappers that turn `-1` and `errno` into a thrown
/// ``SystemError`` and retry on `EINTR`, after `swift-system`'s `valueOrErrno`. Nothing else in either package calls
/// `pipe`, `fcntl`, `read`, `write`, `send`, `poll`, `socket`, `connect` or `close` directly.
public enum Syscall {
    /// Runs `call` until it does not fail with `EINTR`; a result of `-1` throws with the call's `errno`.
    @inline(__always)
    static func retrying<Result: FixedWidthInteger>(_ function: String, _ call: () -> Result) throws(SystemError) -> Result {
        while true {
            let result = call()
            if result != -1 { return result }
            let number = errno
            if number != EINTR { throw SystemError(function: function, number: number) }
        }
    }

    /// Like ``retrying(_:_:)``, for calls that fail with `EAGAIN` when they would block: nil then.
    @inline(__always)
    static func unlessWouldBlock<Result: FixedWidthInteger>(_ function: String, _ call: () -> Result) throws(SystemError) -> Result? {
        do {
            return try retrying(function, call)
        } catch where error.number == EAGAIN || error.number == EWOULDBLOCK {
            return nil
        }
    }

    /// A pipe whose two ends are non-blocking and close-on-exec.
    public static func pipe() throws(SystemError) -> (readEnd: Int32, writeEnd: Int32) {
        var ends: [Int32] = [-1, -1]
        _ = try retrying("pipe2") { clinux_pipe2(&ends, O_NONBLOCK | O_CLOEXEC) }
        return (ends[0], ends[1])
    }

    /// A TCP socket for `family`, non-blocking and close-on-exec.
    package static func streamSocket(family: Int32) throws(SystemError) -> Int32 {
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        return try retrying("socket") { socket(family, type, 0) }
    }

    /// Starts a connection on a non-blocking socket: true if it is made at once, false if it is in progress.
    package static func startConnecting(_ socket: Int32, to address: SocketAddress) throws(SystemError) -> Bool {
        let result = address.withSockaddr { connect(socket, $0, $1) }
        if result == 0 { return true }
        // An interrupted connect goes on in the background, like one in progress.
        if errno == EINPROGRESS || errno == EINTR { return false }
        throw SystemError(function: "connect", number: errno)
    }

    /// The outcome of a connection attempt that was in progress (`SO_ERROR`): throws the reason it failed.
    public static func finishConnecting(_ socket: Int32) throws(SystemError) {
        var failure: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        _ = try retrying("getsockopt") { getsockopt(socket, SOL_SOCKET, SO_ERROR, &failure, &length) }
        if failure != 0 { throw SystemError(function: "connect", number: failure) }
    }

    /// Reads what is there into `buffer`: the count, 0 at end of file, nil if nothing is there yet.
    public static func read(_ fd: Int32, into buffer: inout [UInt8]) throws(SystemError) -> Int? {
        try unlessWouldBlock("read") { buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) } }
    }

    /// Writes as much of `bytes` as a pipe takes now; nil if it is full.
    public static func write(_ fd: Int32, _ bytes: [UInt8]) throws(SystemError) -> Int? {
        try unlessWouldBlock("write") { bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) } }
    }

    /// Sends on a socket without raising SIGPIPE if the peer has gone (`MSG_NOSIGNAL`: the failure is `EPIPE`,
    /// thrown, and the process's signal handling is left alone). nil if the socket's buffer is full.
    package static func send(_ socket: Int32, _ bytes: ArraySlice<UInt8>) throws(SystemError) -> Int? {
        try unlessWouldBlock("send") {
            bytes.withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }
    }

    /// poll(2): waits until one of `fds` is ready or `milliseconds` pass (-1: no limit); returns how many are.
    /// An interrupted wait returns 0, so the caller looks again at what it waits for.
    public static func poll(_ fds: inout [pollfd], milliseconds: Int32) throws(SystemError) -> Int {
        let count = fds.withUnsafeMutableBufferPointer { Glibc.poll($0.baseAddress, nfds_t($0.count), milliseconds) }
        if count >= 0 { return Int(count) }
        if errno == EINTR { return 0 }
        throw SystemError(function: "poll", number: errno)
    }

    /// Opens a file for reading, close-on-exec.
    package static func openForReading(_ path: String) throws(SystemError) -> Int32 {
        try retrying("open") { open(path, O_RDONLY | O_CLOEXEC) }
    }

    /// Closes a descriptor. Not retried: on Linux a close interrupted by a signal has closed it already.
    public static func close(_ fd: Int32) {
        _ = Glibc.close(fd)
    }
}

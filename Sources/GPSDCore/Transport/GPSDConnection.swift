import Glibc
import GPSDSystem

/// One TCP connection to gpsd, made and used by one reader thread and closed when it goes.
///
/// The connect is non-blocking and waits in poll(2) beside the session's ``WakePipe``, so closing the session
/// interrupts it. Commands go out with `MSG_NOSIGNAL`: a gpsd that has gone makes a send fail with `EPIPE`
/// instead of raising SIGPIPE, and the process's signal handling stays the application's.
final class GPSDConnection {
    let socket: Int32
    let server: GPSDServer

    private init(socket: Int32, server: GPSDServer) {
        self.socket = socket
        self.server = server
    }

    deinit { Syscall.close(socket) }

    /// The addresses of `server`. Looking a name up blocks, and nothing interrupts it.
    /// - Throws: ``LocationError/Code/gpsdUnavailable`` when the name does not resolve.
    static func addresses(of server: GPSDServer) -> Result<[SocketAddress], LocationError> {
        do {
            return .success(try SocketAddress.resolve(host: server.host, port: server.port))
        } catch {
            return .failure(LocationError(
                .gpsdUnavailable, "cannot find gpsd's host '\(server.host)': \(error.reason)",
                errorNumber: error.errorNumber))
        }
    }

    /// Connects to `server` at one of `addresses`, trying each in turn.
    /// - Parameters:
    ///   - wake: the session's pipe; a signal on it makes the connect look at `isClosed`.
    ///   - timeout: how long each address may take to answer; `nil` waits as long as the system does.
    /// - Returns: the connection, or `nil` if `isClosed` became true meanwhile.
    /// - Throws: ``LocationError/Code/gpsdUnavailable`` when no address takes the connection.
    static func connect(
        to server: GPSDServer, at addresses: [SocketAddress], wake: WakePipe, timeout: Duration? = nil,
        isClosed: () -> Bool
    ) throws(LocationError) -> GPSDConnection? {
        var lastFailure = SystemError(function: "getaddrinfo", number: EADDRNOTAVAIL)
        for address in addresses {
            if isClosed() { return nil }
            do throws(SystemError) {
                let socket = try Syscall.streamSocket(family: address.family)
                let connection = GPSDConnection(socket: socket, server: server)
                if try Syscall.startConnecting(socket, to: address) { return connection }
                // Woken without being closed (a held-fix request came): go on waiting, until the deadline.
                let deadline = timeout.map { ContinuousClock.now + $0 }
                while true {
                    let remaining = deadline.map { ContinuousClock.now.duration(to: $0) }
                    if let remaining, remaining <= .zero { throw SystemError(function: "connect", number: ETIMEDOUT) }
                    if try wake.wait(for: socket, events: Int16(POLLOUT), timeout: remaining) { break }
                    if isClosed() { return nil }
                }
                try Syscall.finishConnecting(socket)
                return connection
            } catch {
                lastFailure = error
            }
        }
        throw lastFailure.locationError(.gpsdUnavailable, "cannot connect to gpsd at \(server)")
    }

    /// Sends `command` (the watch) and waits for the peer's first line, and judges it (``GPSDGreeting``): gpsd
    /// greets a client at once, whatever it is sent, so a peer that does not within `timeout` of the connection,
    /// or hangs up first, has not connected. The command goes out first: a peer that is not gpsd may only answer
    /// one (a web server's "Bad request").
    /// - Parameters:
    ///   - wake: the session's pipe; a signal on it makes the wait look at `isClosed`.
    ///   - timeout: how long the greeting may take; `nil` waits as long as it takes.
    /// - Returns: every byte received, the greeting first, for the reader; `nil` if `isClosed` became true meanwhile.
    /// - Throws: ``LocationError/Code/notGPSD`` for a peer whose first line is not gpsd's JSON (the watch ends: the
    ///   address is wrong); ``LocationError/Code/gpsdUnavailable`` for one that says nothing in time, or hangs up
    ///   first (gpsd stopped, or with no room for another client: the watch tries again).
    func awaitGreeting(
        afterSending command: String, wake: WakePipe, timeout: Duration?, isClosed: () -> Bool
    ) throws(LocationError) -> [UInt8]? {
        let deadline = timeout.map { ContinuousClock.now + $0 }
        do {
            try send(command, wake: wake, isClosed: isClosed)
        } catch {
            throw hungUpBeforeGreeting(error.errorNumber.map { SystemError(function: "send", number: $0) })
        }
        var greeting = GPSDGreeting()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            if isClosed() { return nil }
            let remaining = deadline.map { ContinuousClock.now.duration(to: $0) }
            if let timeout, let remaining, remaining <= .zero {
                throw LocationError(
                    .gpsdUnavailable, "the server at \(server) sent no greeting within \(timeout.secondsText) of "
                        + "connecting: it is not gpsd, or gpsd is not answering", errorNumber: ETIMEDOUT)
            }
            let count: Int?
            do throws(SystemError) {
                count = try wake.wait(for: socket, timeout: remaining) ? try Syscall.read(socket, into: &buffer) : nil
            } catch {
                throw hungUpBeforeGreeting(error)
            }
            guard let count else { continue }   // woken (to close, or with a held-fix request for later)
            guard count > 0 else { throw hungUpBeforeGreeting(nil) }
            switch greeting.append(buffer[..<count]) {
            case .incomplete: continue
            case .gpsd: return greeting.received
            case .notGPSD(let line):
                throw LocationError(
                    .notGPSD, "the server at \(server) is not gpsd: it answered '\(line)' where gpsd greets with its VERSION")
            }
        }
    }

    /// The peer closed the connection (or reset it: `failure`) before greeting.
    private func hungUpBeforeGreeting(_ failure: SystemError?) -> LocationError {
        LocationError(
            .gpsdUnavailable, "the server at \(server) closed the connection without greeting as gpsd does"
                + (failure.map { " (\($0))" } ?? "") + ": it is not gpsd, or gpsd has no room for another client",
            errorNumber: failure?.number)
    }

    /// Sends a command such as `?POLL;`, waiting (interruptibly) while the socket's buffer is full.
    /// - Throws: ``LocationError/Code/connectionLost`` if gpsd has gone.
    func send(_ command: String, wake: WakePipe, isClosed: () -> Bool) throws(LocationError) {
        var bytes = Array(command.utf8)[...]
        do throws(SystemError) {
            while !bytes.isEmpty && !isClosed() {
                if let sent = try Syscall.send(socket, bytes) {
                    bytes = bytes.dropFirst(sent)
                } else {
                    _ = try wake.wait(for: socket, events: Int16(POLLOUT), timeout: nil)
                }
            }
        } catch {
            throw error.locationError(.connectionLost, "connection to gpsd at \(server) lost")
        }
    }
}

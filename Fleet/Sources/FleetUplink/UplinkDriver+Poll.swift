import FleetCore
import GPSDSystem

#if canImport(Glibc)
import Glibc
#endif

// The network thread's wait: poll(2) on the connection's socket and the wake pipe, then libmosquitto's loop calls.
extension UplinkDriver {
    /// Waits for the socket, a wake or the machine's deadline (a second at most while connected, for the
    /// keepalive), then lets libmosquitto read, write and keep alive; its callbacks fill ``events``.
    func drive() {
        let connected = connection.map { $0.socket >= 0 } ?? false
        var timeout = machine.deadline.map { ContinuousClock.now.duration(to: $0) }
        if connected { timeout = min(timeout ?? .seconds(1), .seconds(1)) }
        guard let connection, connected else {
            _ = try? uplink.wake.poll(nil, events: 0, timeout: timeout)
            return
        }
        // Until the TCP connect is made, the socket is polled for writing alone; then, during a TLS handshake
        // (until CONNACK), for reading alone: libmosquitto wants to write all through it, and the handshake goes on
        // in loopRead. Otherwise for reading, and for writing while libmosquitto has something to write.
        let beforeConnack = if case .connecting = machine.state { true } else { false }
        let tlsHandshake = uplink.configuration.broker.tlsCAFile != nil && beforeConnack
        let wanted = isConnectingTCP ? Int16(POLLOUT)
            : Int16(POLLIN) | (connection.wantsWrite && !tlsHandshake ? Int16(POLLOUT) : 0)
        do {
            let ready = try uplink.wake.poll(connection.socket, events: wanted, timeout: timeout)
            if isConnectingTCP {
                guard ready != 0 else { return }
                do {
                    try Syscall.finishConnecting(connection.socket)
                } catch {
                    lostReason = "cannot connect to \(uplink.configuration.broker.address.host):\(uplink.configuration.broker.address.port): \(error.text)"
                    throw error
                }
                isConnectingTCP = false
            }
            // A TLS handshake goes on in loopRead, also when the socket has only become writable (its first flight,
            // once the connect is made); on a plain socket with nothing to read it does nothing.
            if ready != 0 { try connection.loopRead() }
            // Closed before CONNACK (a TLS handshake does not tell a refused or reset connect: its error is only
            // the socket's): after loopRead, which has read a refusing CONNACK if one came.
            if beforeConnack, ready & Int16(POLLERR | POLLHUP) != 0, events.isEmpty, connection.socket >= 0 {
                let broker = "\(uplink.configuration.broker.address.host):\(uplink.configuration.broker.address.port)"
                do {
                    try Syscall.finishConnecting(connection.socket)
                    lostReason = "cannot connect to \(broker): the connection was refused or closed before CONNACK"
                } catch {
                    lostReason = "cannot connect to \(broker): \(error.text)"
                }
            } else {
                if connection.socket >= 0, connection.wantsWrite { try connection.loopWrite() }
                if connection.socket >= 0 { try connection.loopMisc() }
            }
        } catch {
            lostReason = lostReason ?? "\(error)"
        }
        if let reason = lostReason {
            lostReason = nil
            events.append(.lost(reason))
        }
    }

    /// Tells the uplink's callers what the machine counts now, and resumes the waits for a drained queue.
    func report() {
        let counts = UplinkShared.Counts(acknowledged: machine.acknowledgedCount, connections: machine.connections,
                                         refusals: machine.refusals, inFlight: machine.inFlight)
        let drained = machine.state == .stopped || (machine.inFlight == 0 && uplink.queue.statistics.depth == 0)
        let waiters = uplink.shared.withLock { shared -> [CheckedContinuation<Void, Never>] in
            shared.counts = counts
            guard drained, shared.pending.isEmpty, shared.held.isEmpty, !shared.isWriting, shared.newest == nil else { return [] }
            defer { shared.drainWaiters = [] }
            return shared.drainWaiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

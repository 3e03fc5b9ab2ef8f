import CoreMetrics
import FleetCore
import Foundation
import GPSDLocation
import GPSDSystem
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// The uplink's network thread: owns the machine and the connection, feeds the machine each input (what
/// libmosquitto reported, a new fix, the stop, the time) and carries out what it returns. Only this thread touches
/// either; other threads reach it through ``UplinkShared`` and the wake pipe.
final class UplinkDriver {
    let uplink: Uplink
    var machine: UplinkMachine
    var connection: MQTTConnection?
    /// What libmosquitto's callbacks reported during the last loop calls, in order.
    var events: [Event] = []
    /// Why the connection ended, if it did during the last loop calls: a loop call's error, or the callback's code.
    var lostReason: String?
    /// The connection's TCP connect is still under way (its socket is polled for writing until it is made).
    var isConnectingTCP = false
    private let fixTopic: String, stateTopic: String, statusTopic: String

    enum Event {
        case connack(MQTTConnectResult)
        case acknowledged(Int32)
        case lost(String)
    }

    init(uplink: Uplink) {
        self.uplink = uplink
        let configuration = uplink.configuration
        // Under the keepalive: libmosquitto closes a connection without CONNACK after it, less clearly.
        let keepAlive = max(configuration.broker.keepAlive, .seconds(1))
        let settings = UplinkMachine.Settings(
            window: min(max(configuration.maximumInFlight, 1), 65_532), batchSize: max(configuration.batchSize, 1),
            connectTimeout: min(.seconds(10), keepAlive * 4 / 5), reconnectPolicy: configuration.broker.reconnectPolicy)
        var newest: QueuedFix?
        do {
            newest = try uplink.queue.newest()
        } catch {
            uplink.logger.error("the queue's newest fix could not be read (the state topic waits for the next): \(error)")
        }
        machine = UplinkMachine(settings: settings, lastSeq: uplink.queue.statistics.lastSeq, newest: newest,
                                seed: configuration.jitterSeed ?? UInt64.random(in: .min ... .max))
        fixTopic = FleetTopic.fix(configuration.vehicle)
        stateTopic = FleetTopic.state(configuration.vehicle)
        statusTopic = FleetTopic.status(configuration.vehicle)
    }

    func run() {
        if !uplink.shared.withLock({ $0.isStopping }), case .connect(let attempt) = machine.start(now: .now) {
            connect(attempt: attempt)
        }
        while machine.state != .stopped {
            let (newest, stop) = uplink.shared.withLock { shared in
                defer { shared.newest = nil }
                return (shared.newest, shared.isStopping)
            }
            if let newest { send(machine.fixQueued(newest)) }
            if stop { perform(machine.stop(now: .now)) }
            if machine.state != .stopped { drive() }
            while !events.isEmpty { handle(events.removeFirst()) }
            perform(machine.timerFired(now: .now))
            report()
        }
        connection?.disconnect()
        try? connection?.loopWrite()
        connection = nil
        report()
    }

    // MARK: - Carrying out

    private func connect(attempt: Int) {
        uplink.setState(.connecting(attempt: attempt))
        let configuration = uplink.configuration
        do {
            let connection = try MQTTConnection(clientID: configuration.clientID(queue: uplink.queue.identity),
                                                cleanSession: true)
            if let username = configuration.broker.address.username {
                try connection.setCredentials(username: username, password: configuration.broker.address.password)
            }
            if let caFile = configuration.broker.tlsCAFile { try connection.setTLS(caFile: caFile) }
            try connection.setWill(topic: statusTopic, payload: Array("offline".utf8), qos: 1, retain: true)
            try connection.setMaxInflight(machine.settings.window + 2)
            connection.onConnect = { [unowned self] in events.append(.connack($0)) }
            connection.onDisconnect = { [unowned self] code in
                if code != 0 { lostReason = lostReason ?? MQTTError(code: code, operation: "connection lost").description }
            }
            connection.onPublish = { [unowned self] in events.append(.acknowledged($0)) }
            self.connection = connection
            isConnectingTCP = true
            try connection.connectAsync(host: configuration.broker.address.host, port: configuration.broker.address.port,
                                        keepAlive: Int32(clamping: max(configuration.broker.keepAlive.components.seconds, 1)))
        } catch {
            connection = nil
            ended(machine.connectFailed("cannot connect: \(error)", now: .now))
        }
    }

    private func handle(_ event: Event) {
        switch event {
        case .connack(let result):
            switch machine.connackReceived(result, now: .now) {
            case .online(let sends):
                uplink.metrics.connections.increment()
                uplink.logger.info("connected to \(uplink.configuration.broker.address)")
                uplink.setState(.online)
                publish(statusTopic, Array("online".utf8), retain: true)
                send(sends)
            case .refused(let retry):
                uplink.metrics.refusals.increment()
                ended(.retry(retry))
            case .ignored:
                break
            }
        case .acknowledged(let id):
            switch machine.acknowledged(id, now: .now) {
            case .sent(let sends, let seq, let remove):
                if let seq { acknowledged(seq) }
                removeFromQueue(remove)
                send(sends)
            case .closed(let seq, let remove):
                if let seq { acknowledged(seq) }
                removeFromQueue(remove)
            case .ignored:
                break
            }
        case .lost(let reason):
            ended(machine.connectionLost(reason, now: .now))
        }
    }

    private func ended(_ result: UplinkMachine.OnConnectionEnded) {
        switch result {
        case .retry(let retry):
            events.removeAll()
            connection = nil
            removeFromQueue(retry.remove)
            if case .refused(let reason) = retry.reason {
                uplink.logger.error("broker \(uplink.configuration.broker.address) refused the connection: \(reason)")
            } else if case .disconnected(let reason) = retry.reason {
                uplink.logger.warning("broker \(uplink.configuration.broker.address): \(reason)")
            }
            uplink.setState(retry.reason)
            uplink.setState(.waiting(retry.delay))
        case .stopped(let remove):
            removeFromQueue(remove)
        case .ignored:
            break
        }
    }

    private func perform(_ result: UplinkMachine.OnTimer) {
        switch result {
        case .none: break
        case .connect(let attempt): connect(attempt: attempt)
        case .connectionEnded(let ended): self.ended(ended)
        case .remove(let seqs): removeFromQueue(seqs)
        case .close(let seqs): removeFromQueue(seqs)
        }
    }

    private func perform(_ result: UplinkMachine.OnStop) {
        switch result {
        case .stopped(let seqs, _):
            removeFromQueue(seqs)
        case .publishOffline(let seqs):
            removeFromQueue(seqs)
            let id = publish(statusTopic, Array("offline".utf8), retain: true)
            if case .disconnect(let seqs) = machine.offlinePublished(id, now: .now) { removeFromQueue(seqs) }
        case .ignored:
            break
        }
    }

    /// Publishes the state topic's fix and the fixes, then reads the next batch and publishes from it.
    private func send(_ sends: UplinkMachine.Sends) {
        var sends = sends
        while true {
            if let state = sends.state, let id = publish(stateTopic, state.payload, retain: true) {
                machine.statePublished(id)
            }
            var ids: [Int32] = []
            for fix in sends.fixes {
                guard let id = publish(fixTopic, fix.payload, retain: false) else { break }
                ids.append(id)
            }
            machine.published(ids, for: sends.fixes)
            // A failed publish has reported the connection's loss: nothing more goes out on it.
            guard ids.count == sends.fixes.count, let read = sends.read else { return }
            let batch: [QueuedFix]
            do {
                batch = try uplink.queue.batch(after: read.after, limit: read.limit)
            } catch {
                // Read again on a new connection, after the backoff.
                events.append(.lost("the queue could not be read: \(error)"))
                return
            }
            sends = machine.batchRead(batch)
        }
    }

    /// Publishes at QoS 1; nil (and the connection's loss reported) if it failed.
    @discardableResult
    private func publish(_ topic: String, _ payload: [UInt8], retain: Bool) -> Int32? {
        guard let connection else { return nil }
        do {
            return try connection.publish(topic: topic, payload: payload, qos: 1, retain: retain)
        } catch {
            events.append(.lost("\(error)"))
            return nil
        }
    }

    private func acknowledged(_ seq: Int64) {
        let arrival = uplink.shared.withLock { $0.arrivals.isEmpty ? nil : $0.arrivals.removeValue(forKey: seq) }
        uplink.metrics.acknowledged.increment()
        if let arrival { uplink.metrics.latency.recordNanoseconds(arrival.duration(to: .now).nanoseconds) }
    }

    /// Removes acknowledged fixes from the queue; a failure keeps them for the next try.
    private func removeFromQueue(_ seqs: [Int64]) {
        guard !seqs.isEmpty else { return }
        do {
            try uplink.queue.remove(seqs)
            uplink.metrics.update(uplink.queue.statistics, now: Date())
        } catch {
            // If the connection ends first they stay in the queue and are sent again at the next connection: the
            // broker gets them twice, the ingest stores them once.
            uplink.logger.error("acknowledged fixes not removed from the queue yet: \(error)")
            machine.removeFailed(seqs, now: .now)
        }
    }
}

extension Duration {
    /// Whole nanoseconds.
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}

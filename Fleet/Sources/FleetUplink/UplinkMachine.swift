import GPSDLocation
import GPSDSystem

/// What an ``Uplink`` decides, as a value: when to connect and to retry, which fixes to publish within the window,
/// when acknowledged fixes leave the queue, and how it stops. It does nothing itself: each input returns what it
/// causes, and the uplink's network thread carries that out (`Uplink+Network.swift`). Time comes with each input
/// and the jitter from a seeded generator, so every transition is a test without a broker, a thread or a sleep
/// (`UplinkMachineTests`).
///
/// ```
///          start          CONNACK accepted
///  idle ─────────▶ connecting ─────────────▶ online ──── stop ───▶ closing ──▶ stopped
///                   │  ▲   │ refused, lost,      │ lost                 (offline acknowledged,
///                   │  │   │ no CONNACK in time  ▼                       or 2 s, or lost)
///                   │  │   └──────────────▶ waiting ◀─┘
///                   │  └──── backoff over ────┘
///                   └──── stop (from connecting or waiting): stopped at once
/// ```
struct UplinkMachine: Sendable {
    typealias Instant = ContinuousClock.Instant

    enum State: Sendable, Equatable {
        case idle
        case connecting(Connecting)
        case online(Online)
        case waiting(Waiting)
        case closing(Closing)
        case stopped
    }

    let settings: Settings
    private(set) var state = State.idle
    private var random: SplitMix64
    /// The newest fix queued, for the state topic.
    private(set) var newest: QueuedFix?
    /// The queue's highest sequence number, as far as the machine was told.
    private(set) var lastSeq: Int64
    /// Fixes the broker acknowledged that are still in the queue, and when they were last removed.
    private(set) var unremoved: [Int64] = []
    private var lastFlush: Instant?
    /// A removal failed: the next is tried no sooner than this, forced or not.
    private var removalRetry: Instant?
    /// What it has done since it started.
    private(set) var acknowledgedCount: Int64 = 0
    private(set) var connections = 0
    private(set) var refusals = 0

    /// A machine for a queue whose highest sequence number is `lastSeq` and whose newest fix is `newest`; `seed`
    /// chooses the jitter of every delay.
    init(settings: Settings, lastSeq: Int64, newest: QueuedFix?, seed: UInt64) {
        self.settings = settings
        self.lastSeq = lastSeq
        self.newest = newest
        random = SplitMix64(seed: seed)
    }

    /// Fixes published and not yet acknowledged.
    var inFlight: Int {
        switch state {
        case .online(let online): online.inFlight.count
        case .closing(let closing): closing.inFlight.count
        case .idle, .connecting, .waiting, .stopped: 0
        }
    }

    /// When ``timerFired(now:)`` is due: the CONNACK deadline, the end of a wait, the next removal of acknowledged
    /// fixes, or the end of a close. Nil: nothing is due until another input.
    var deadline: Instant? {
        switch state {
        case .idle, .stopped: nil
        case .connecting(let connecting): connecting.deadline
        case .waiting(let waiting): waiting.until
        case .online, .closing:
            unremoved.isEmpty ? closingDeadline : [lastFlush.map { $0 + settings.flushInterval }, closingDeadline]
                .compactMap { $0 }.min()
        }
    }

    private var closingDeadline: Instant? { if case .closing(let closing) = state { closing.deadline } else { nil } }

    // MARK: - Starting and connecting

    /// The uplink starts: connect.
    mutating func start(now: Instant) -> OnStart {
        guard case .idle = state else { return .ignored }
        state = .connecting(Connecting(attempt: 1, failures: 0, deadline: now + settings.connectTimeout))
        return .connect(attempt: 1)
    }

    /// The connection could not even be started (no address, no socket, a TLS set-up that failed).
    mutating func connectFailed(_ reason: String, now: Instant) -> OnConnectionEnded {
        guard case .connecting(let connecting) = state else { return .ignored }
        return .retry(retry(failures: connecting.failures + 1, reason: .disconnected(reason), now: now))
    }

    /// The broker's CONNACK.
    mutating func connackReceived(_ result: MQTTConnectResult, now: Instant) -> OnConnack {
        guard case .connecting(let connecting) = state else { return .ignored }
        guard case .accepted = result else {
            refusals += 1
            let reason = if case .refused(_, let reason) = result { reason } else { "refused" }
            return .refused(retry(failures: connecting.failures + 1, reason: .refused(reason), now: now))
        }
        connections += 1
        var online = Online(from: connecting, cursor: 0)
        let sends = online.sends(newest: newest, lastSeq: lastSeq, settings: settings)
        state = .online(online)
        return .online(sends)
    }

    /// The connection ended: lost, closed by the broker, or a loop call failed.
    mutating func connectionLost(_ reason: String, now: Instant) -> OnConnectionEnded {
        switch state {
        case .connecting(let connecting):
            return .retry(retry(failures: connecting.failures + 1, reason: .disconnected(reason), now: now))
        case .online:
            // A connection that was accepted proves the settings good: the backoff starts again from its first step.
            return .retry(retry(failures: 1, reason: .disconnected(reason), now: now))
        case .closing:
            state = .stopped
            return .stopped(remove: takeUnremoved(now: now))
        case .idle, .waiting, .stopped:
            return .ignored
        }
    }

    private mutating func retry(failures: Int, reason: UplinkState, now: Instant) -> Retry {
        let delay = settings.reconnectPolicy.delay(afterFailures: failures, unit: random.nextUnit())
        state = .waiting(Waiting(failures: failures, until: now + delay))
        return Retry(reason: reason, delay: delay, remove: takeUnremoved(now: now))
    }

    // MARK: - Publishing

    /// The fixes of ``Sends/fixes`` went out with these message ids, in order.
    mutating func published(_ ids: [Int32], for fixes: [QueuedFix]) {
        guard case .online(var online) = state else { return }
        for (id, fix) in zip(ids, fixes) { online.inFlight[id] = fix.seq }
        state = .online(online)
    }

    /// The state topic's message went out with message id `id`.
    mutating func statePublished(_ id: Int32) {
        guard case .online(var online) = state else { return }
        online.stateMessage = id
        state = .online(online)
    }

    /// A write of fixes to the queue ended, `newest` the last of them.
    mutating func fixQueued(_ newest: QueuedFix) -> Sends {
        if newest.seq > (self.newest?.seq ?? 0) { self.newest = newest }
        lastSeq = max(lastSeq, newest.seq)
        guard case .online(var online) = state else { return Sends() }
        let sends = online.sends(newest: self.newest, lastSeq: lastSeq, settings: settings)
        state = .online(online)
        return sends
    }

    /// The batch asked for by ``Sends/read`` (empty: nothing after the cursor any more).
    mutating func batchRead(_ fixes: [QueuedFix]) -> Sends {
        guard case .online(var online) = state else { return Sends() }
        online.reading = false
        if fixes.isEmpty {
            online.readUpTo = max(online.readUpTo, lastSeq)
        } else {
            online.buffer = fixes
            online.next = 0
        }
        let sends = online.sends(newest: newest, lastSeq: lastSeq, settings: settings)
        state = .online(online)
        return sends
    }

    /// The broker acknowledged message `id`.
    mutating func acknowledged(_ id: Int32, now: Instant) -> OnAcknowledged {
        switch state {
        case .online(var online):
            if id == online.stateMessage {
                online.stateMessage = nil
                let sends = online.sends(newest: newest, lastSeq: lastSeq, settings: settings)
                state = .online(online)
                return .sent(sends, acknowledged: nil, remove: [])
            }
            guard let seq = online.inFlight.removeValue(forKey: id) else { return .ignored }
            acknowledge(seq, now: now)
            let sends = online.sends(newest: newest, lastSeq: lastSeq, settings: settings)
            let force = online.inFlight.isEmpty && sends.fixes.isEmpty && sends.read == nil
            state = .online(online)
            return .sent(sends, acknowledged: seq, remove: flush(now: now, force: force))
        case .closing(var closing):
            if id == closing.offlineMessage {
                state = .stopped
                return .closed(acknowledged: nil, remove: takeUnremoved(now: now))
            }
            guard let seq = closing.inFlight.removeValue(forKey: id) else { return .ignored }
            acknowledge(seq, now: now)
            state = .closing(closing)
            return .sent(Sends(), acknowledged: seq, remove: [])
        case .idle, .connecting, .waiting, .stopped:
            return .ignored
        }
    }

    private mutating func acknowledge(_ seq: Int64, now: Instant) {
        acknowledgedCount += 1
        unremoved.append(seq)
        if lastFlush == nil { lastFlush = now }
    }

    // MARK: - Removing acknowledged fixes

    /// Acknowledged fixes to remove from the queue now: `force`d, a full batch, or the interval passed.
    private mutating func flush(now: Instant, force: Bool) -> [Int64] {
        guard !unremoved.isEmpty else { return [] }
        if let removalRetry, now < removalRetry { return [] }
        let due = lastFlush.map { $0.duration(to: now) >= settings.flushInterval } ?? true
        guard force || unremoved.count >= settings.flushCount || due else { return [] }
        return takeUnremoved(now: now)
    }

    private mutating func takeUnremoved(now: Instant) -> [Int64] {
        defer { unremoved.removeAll(keepingCapacity: true) }
        lastFlush = unremoved.isEmpty ? nil : now
        return unremoved
    }

    /// Removing `seqs` from the queue failed: they are kept, and tried again no sooner than the flush interval on
    /// (or at the connection's end), so a disk that keeps failing is not retried at every turn.
    mutating func removeFailed(_ seqs: [Int64], now: Instant) {
        unremoved.insert(contentsOf: seqs, at: 0)
        lastFlush = now
        removalRetry = now + settings.flushInterval
    }

    // MARK: - Time and stop

    /// ``deadline`` has come (or passed).
    mutating func timerFired(now: Instant) -> OnTimer {
        switch state {
        case .connecting(let connecting) where now >= connecting.deadline:
            let reason = "no answer to CONNECT within \(settings.connectTimeout.secondsText)"
            return .connectionEnded(.retry(retry(failures: connecting.failures + 1, reason: .disconnected(reason), now: now)))
        case .waiting(let waiting) where now >= waiting.until:
            let connecting = Connecting(after: waiting, deadline: now + settings.connectTimeout)
            state = .connecting(connecting)
            return .connect(attempt: connecting.attempt)
        case .closing(let closing) where now >= closing.deadline:
            state = .stopped
            return .close(remove: takeUnremoved(now: now))
        case .online, .closing:
            return .remove(flush(now: now, force: false))
        case .idle, .connecting, .waiting, .stopped:
            return .none
        }
    }

    /// ``Uplink/stop()``: what is connected says `offline` first; the rest ends at once.
    mutating func stop(now: Instant) -> OnStop {
        switch state {
        case .idle:
            state = .stopped
            return .stopped(remove: [], dropConnection: false)
        case .connecting, .waiting:
            let wasConnecting = if case .connecting = state { true } else { false }
            state = .stopped
            return .stopped(remove: takeUnremoved(now: now), dropConnection: wasConnecting)
        case .online(let online):
            state = .closing(Closing(from: online, deadline: now + settings.closeTimeout))
            return .publishOffline(remove: takeUnremoved(now: now))
        case .closing, .stopped:
            return .ignored
        }
    }

    /// The `offline` message went out with message id `id` (nil: it could not be published: disconnect now).
    mutating func offlinePublished(_ id: Int32?, now: Instant) -> OnOfflinePublished {
        guard case .closing(var closing) = state else { return .ignored }
        guard let id else {
            state = .stopped
            return .disconnect(remove: takeUnremoved(now: now))
        }
        closing.offlineMessage = id
        state = .closing(closing)
        return .wait
    }
}

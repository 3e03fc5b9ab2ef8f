@testable import FleetUplink
import GPSDLocation
import GPSDSystem
import Testing

/// The uplink's machine as a value: each input, what it returns and where it leaves the machine. No broker, no
/// thread, no sleep: time is given with each input, and the jitter comes from a seed.
@Suite("The uplink's machine")
struct UplinkMachineTests {
    typealias Machine = UplinkMachine
    let t0 = ContinuousClock.now
    static let policy = ReconnectPolicy(initialDelay: .milliseconds(500), maximumDelay: .seconds(30), jitter: 0.5)

    static func settings(window: Int = 4, batchSize: Int = 3) -> Machine.Settings {
        Machine.Settings(window: window, batchSize: batchSize, connectTimeout: .seconds(10), reconnectPolicy: policy)
    }

    static func fix(_ seq: Int64) -> QueuedFix { QueuedFix(seq: seq, payload: Array("fix \(seq)".utf8)) }
    static func fixes(_ seqs: ClosedRange<Int64>) -> [QueuedFix] { seqs.map(fix) }

    /// A machine online on a queue holding fixes 1...`lastSeq`, the state topic's fix published (as message 1000).
    func online(window: Int = 4, batchSize: Int = 3, lastSeq: Int64 = 0, seed: UInt64 = 7) -> (Machine, Machine.Sends) {
        var machine = Machine(settings: Self.settings(window: window, batchSize: batchSize), lastSeq: lastSeq,
                              newest: lastSeq > 0 ? Self.fix(lastSeq) : nil, seed: seed)
        _ = machine.start(now: t0)
        guard case .online(let sends) = machine.connackReceived(.accepted, now: t0) else {
            Issue.record("not online")
            return (machine, Machine.Sends())
        }
        if sends.state != nil { machine.statePublished(1000) }
        return (machine, sends)
    }

    // MARK: - Connecting

    @Test func startConnectsOnceAndALaterStartIsIgnored() {
        var machine = Machine(settings: Self.settings(), lastSeq: 0, newest: nil, seed: 1)
        #expect(machine.start(now: t0) == .connect(attempt: 1))
        #expect(machine.state == .connecting(.init(attempt: 1, failures: 0, deadline: t0 + .seconds(10))))
        #expect(machine.deadline == t0 + .seconds(10))
        #expect(machine.start(now: t0) == .ignored)
    }

    @Test func anAcceptedConnectionSendsTheNewestFixFirstThenAsksForTheBacklog() {
        let (machine, sends) = online(lastSeq: 5)
        #expect(sends == Machine.Sends(state: Self.fix(5), fixes: [], read: .init(after: 0, limit: 3)))
        #expect(machine.connections == 1)
        guard case .online = machine.state else { Issue.record("\(machine.state)"); return }
    }

    @Test func anEmptyQueueAsksForNothing() {
        let (_, sends) = online(lastSeq: 0)
        #expect(sends == Machine.Sends())
    }

    @Test func aRefusedLoginWaitsWithGrowingDelaysAndCountsEachRefusal() {
        var machine = Machine(settings: Self.settings(), lastSeq: 0, newest: nil, seed: 42)
        var reference = SplitMix64(seed: 42)
        _ = machine.start(now: t0)
        var now = t0
        for attempt in 1...6 {
            let result = machine.connackReceived(.refused(code: 5, reason: "not authorised"), now: now)
            let delay = Self.policy.delay(afterFailures: attempt, unit: reference.nextUnit())
            #expect(result == .refused(.init(reason: .refused("not authorised"), delay: delay, remove: [])))
            #expect(machine.state == .waiting(.init(failures: attempt, until: now + delay)))
            #expect(machine.refusals == attempt)
            #expect(machine.timerFired(now: now + delay - .milliseconds(1)) == Machine.OnTimer.none, "not yet")
            now = now + delay
            #expect(machine.timerFired(now: now) == .connect(attempt: attempt + 1))
        }
        #expect(machine.connections == 0)
    }

    @Test func theSameSeedGivesTheSameDelaysAndAnotherSeedOthers() {
        func delays(seed: UInt64) -> [Duration] {
            var machine = Machine(settings: Self.settings(), lastSeq: 0, newest: nil, seed: seed)
            _ = machine.start(now: t0)
            return (0..<5).map { _ in
                guard case .retry(let retry) = machine.connectFailed("no route", now: t0) else { return .zero }
                _ = machine.timerFired(now: t0 + retry.delay)
                return retry.delay
            }
        }
        #expect(delays(seed: 3) == delays(seed: 3))
        #expect(delays(seed: 3) != delays(seed: 4))
    }

    @Test func aConnectionThatCannotStartIsRetried() {
        var machine = Machine(settings: Self.settings(), lastSeq: 0, newest: nil, seed: 1)
        _ = machine.start(now: t0)
        guard case .retry(let retry) = machine.connectFailed("cannot connect: no such host", now: t0) else {
            Issue.record("no retry"); return
        }
        #expect(retry.reason == .disconnected("cannot connect: no such host"))
        #expect(machine.connectFailed("again", now: t0) == .ignored, "only a connection under way can fail to start")
    }

    @Test func noConnackBeforeTheDeadlineEndsTheAttempt() {
        var machine = Machine(settings: Self.settings(), lastSeq: 0, newest: nil, seed: 1)
        _ = machine.start(now: t0)
        #expect(machine.timerFired(now: t0 + .seconds(9)) == Machine.OnTimer.none)
        guard case .connectionEnded(.retry(let retry)) = machine.timerFired(now: t0 + .seconds(10)) else {
            Issue.record("\(machine.state)"); return
        }
        #expect(retry.reason == .disconnected("no answer to CONNECT within 10 s"))
        #expect(machine.connackReceived(.accepted, now: t0 + .seconds(11)) == .ignored, "a late CONNACK")
    }

    @Test func aLostConnectionRetriesFromTheFirstStepOnceItHadBeenOnline() {
        var reference = SplitMix64(seed: 9)
        var machine = Machine(settings: Self.settings(), lastSeq: 0, newest: nil, seed: 9)
        _ = machine.start(now: t0)
        // Two failures before a good connection: the third delay would be the third step.
        for failures in 1...2 {
            guard case .retry(let retry) = machine.connectionLost("reset", now: t0) else { return }
            #expect(retry.delay == Self.policy.delay(afterFailures: failures, unit: reference.nextUnit()))
            #expect(machine.timerFired(now: t0 + retry.delay) == .connect(attempt: failures + 1))
        }
        _ = machine.connackReceived(.accepted, now: t0)
        guard case .retry(let retry) = machine.connectionLost("connection lost", now: t0) else { return }
        #expect(retry.delay == Self.policy.delay(afterFailures: 1, unit: reference.nextUnit()))
        #expect(retry.reason == .disconnected("connection lost"))
    }

    // MARK: - The window

    @Test func aWindowOfOnePublishesOneFixAtATimeInOrder() {
        var (machine, _) = online(window: 1, batchSize: 3, lastSeq: 5)
        var sends = machine.batchRead(Self.fixes(1...3))
        var published: [Int64] = []
        var id: Int32 = 1
        while let fix = sends.fixes.first {
            #expect(sends.fixes.count == 1, "one at a time")
            published.append(fix.seq)
            machine.published([id], for: sends.fixes)
            #expect(machine.inFlight == 1)
            guard case .sent(var next, let acknowledged, _) = machine.acknowledged(id, now: t0) else { break }
            #expect(acknowledged == fix.seq)
            if let read = next.read {
                #expect(read == .init(after: 3, limit: 3))
                next = machine.batchRead(Self.fixes(4...5))
            }
            sends = next
            id += 1
        }
        #expect(published == [1, 2, 3, 4, 5])
        #expect(machine.acknowledgedCount == 5)
    }

    @Test func aWindowOf65535PublishesAWholeBatchAndAsksForTheNext() {
        var (machine, _) = online(window: 65_535, batchSize: 512, lastSeq: 2000)
        let sends = machine.batchRead(Self.fixes(1...512))
        #expect(sends.fixes.map(\.seq) == Array(1...512))
        #expect(sends.read == .init(after: 512, limit: 512))
        machine.published(Array(1...512), for: sends.fixes)
        #expect(machine.inFlight == 512)
    }

    @Test func anEmptyReadStopsReadingUntilANewFixIsQueued() {
        var (machine, _) = online(lastSeq: 3)
        #expect(machine.batchRead([]) == Machine.Sends())
        // The state topic's message is in flight: the new fix goes there later; the backlog is read again.
        #expect(machine.fixQueued(Self.fix(4)) == Machine.Sends(read: .init(after: 0, limit: 3)))
    }

    @Test func theStateTopicCarriesOneMessageAtATimeTheNewestWhenItGoes() {
        var (machine, first) = online(lastSeq: 1)
        #expect(first.state == Self.fix(1))
        _ = machine.batchRead(Self.fixes(1...1))
        #expect(machine.fixQueued(Self.fix(2)).state == nil, "message 1000 is still in flight")
        #expect(machine.fixQueued(Self.fix(3)).state == nil)
        guard case .sent(let sends, nil, []) = machine.acknowledged(1000, now: t0) else { Issue.record("no sends"); return }
        #expect(sends.state == Self.fix(3), "the newest, not each one")
        #expect(machine.acknowledged(4242, now: t0) == .ignored, "an id it never sent")
    }

    // MARK: - Removing acknowledged fixes

    @Test func acknowledgedFixesLeaveTheQueueWhenNothingIsInFlightAFullBatchOrAfterTheInterval() {
        var (machine, _) = online(window: 300, batchSize: 300, lastSeq: 300)
        let sends = machine.batchRead(Self.fixes(1...300))
        machine.published(Array(1...300), for: sends.fixes)
        var removed: [Int64] = []
        for id in Int32(1)...255 {
            guard case .sent(_, _, let remove) = machine.acknowledged(id, now: t0) else { return }
            removed += remove
        }
        #expect(removed.isEmpty, "fewer than 256, within half a second")
        guard case .sent(_, _, let full) = machine.acknowledged(256, now: t0) else { return }
        #expect(full == Array(1...256), "a full batch")
        _ = machine.acknowledged(257, now: t0)
        #expect(machine.deadline == t0 + .milliseconds(500))
        #expect(machine.timerFired(now: t0 + .milliseconds(499)) == .remove([]))
        #expect(machine.timerFired(now: t0 + .milliseconds(500)) == .remove([257]), "the interval")
        for id in Int32(258)...299 { _ = machine.acknowledged(id, now: t0 + .milliseconds(500)) }
        guard case .sent(_, _, let last) = machine.acknowledged(300, now: t0 + .milliseconds(501)) else { return }
        #expect(last == Array(258...300), "nothing left in flight")
    }

    @Test func aFailedRemovalIsKeptAndTriedAgainAfterTheInterval() {
        var (machine, _) = online(lastSeq: 2)
        let sends = machine.batchRead(Self.fixes(1...2))
        machine.published([1, 2], for: sends.fixes)
        _ = machine.acknowledged(1, now: t0)
        guard case .sent(_, _, let remove) = machine.acknowledged(2, now: t0) else { return }
        #expect(remove == [1, 2])
        machine.removeFailed(remove, now: t0 + .seconds(1))
        #expect(machine.unremoved == [1, 2])
        #expect(machine.timerFired(now: t0 + .milliseconds(1499)) == .remove([]))
        #expect(machine.timerFired(now: t0 + .milliseconds(1500)) == .remove([1, 2]))
    }

    @Test func aFailedRemovalIsNotForcedAgainBeforeTheInterval() {
        var (machine, _) = online(lastSeq: 2)
        let sends = machine.batchRead(Self.fixes(1...2))
        machine.published([1, 2], for: sends.fixes)
        _ = machine.acknowledged(1, now: t0)
        #expect(machine.timerFired(now: t0 + .milliseconds(500)) == .remove([1]))
        machine.removeFailed([1], now: t0 + .milliseconds(500))
        // The window empties: a removal would be forced, but the last one failed a moment ago.
        guard case .sent(_, _, let forced) = machine.acknowledged(2, now: t0 + .milliseconds(510)) else { return }
        #expect(forced.isEmpty)
        #expect(machine.timerFired(now: t0 + .milliseconds(999)) == .remove([]))
        #expect(machine.timerFired(now: t0 + .milliseconds(1000)) == .remove([1, 2]))
    }

    @Test func acknowledgedFixesLeaveTheQueueWhenTheConnectionEnds() {
        var (machine, _) = online(lastSeq: 3)
        let sends = machine.batchRead(Self.fixes(1...3))
        machine.published([1, 2, 3], for: sends.fixes)
        _ = machine.acknowledged(1, now: t0)
        guard case .retry(let retry) = machine.connectionLost("reset", now: t0) else { return }
        #expect(retry.remove == [1])
        #expect(machine.inFlight == 0, "2 and 3 go again on the next connection")
    }

    // MARK: - Stop, in every state

    @Test func stopBeforeStartStopsAtOnce() {
        var machine = Machine(settings: Self.settings(), lastSeq: 0, newest: nil, seed: 1)
        #expect(machine.stop(now: t0) == .stopped(remove: [], dropConnection: false))
        #expect(machine.state == .stopped)
        #expect(machine.start(now: t0) == .ignored)
    }

    @Test func stopWhileConnectingDropsTheConnectionUnderWay() {
        var machine = Machine(settings: Self.settings(), lastSeq: 0, newest: nil, seed: 1)
        _ = machine.start(now: t0)
        #expect(machine.stop(now: t0) == .stopped(remove: [], dropConnection: true))
        #expect(machine.connackReceived(.accepted, now: t0) == .ignored)
        #expect(machine.deadline == nil)
    }

    @Test func stopWhileWaitingEndsTheWait() {
        var machine = Machine(settings: Self.settings(), lastSeq: 0, newest: nil, seed: 1)
        _ = machine.start(now: t0)
        _ = machine.connectFailed("refused", now: t0)
        #expect(machine.stop(now: t0) == .stopped(remove: [], dropConnection: false))
        #expect(machine.timerFired(now: t0 + .seconds(60)) == Machine.OnTimer.none)
    }

    @Test func stopWhileOnlinePublishesOfflineAndClosesOnceItIsAcknowledged() {
        var (machine, _) = online(lastSeq: 2)
        let sends = machine.batchRead(Self.fixes(1...2))
        machine.published([1, 2], for: sends.fixes)
        _ = machine.acknowledged(1, now: t0)
        #expect(machine.stop(now: t0) == .publishOffline(remove: [1]))
        #expect(machine.offlinePublished(7, now: t0) == .wait)
        #expect(machine.deadline == t0 + .seconds(2))
        #expect(machine.acknowledged(2, now: t0) == .sent(Machine.Sends(), acknowledged: 2, remove: []),
                "a fix acknowledged while closing still counts")
        #expect(machine.acknowledged(7, now: t0) == .closed(acknowledged: nil, remove: [2]))
        #expect(machine.state == .stopped)
        #expect(machine.stop(now: t0) == .ignored)
    }

    @Test func stopWhileOnlineClosesAfterTwoSecondsWithoutAnAcknowledgement() {
        var (machine, _) = online()
        _ = machine.stop(now: t0)
        _ = machine.offlinePublished(7, now: t0)
        #expect(machine.timerFired(now: t0 + .milliseconds(1999)) == .remove([]))
        #expect(machine.timerFired(now: t0 + .seconds(2)) == .close(remove: []))
        #expect(machine.state == .stopped)
    }

    @Test func stopWhileOnlineWhenOfflineCannotBePublishedDisconnectsAtOnce() {
        var (machine, _) = online()
        _ = machine.stop(now: t0)
        #expect(machine.offlinePublished(nil, now: t0) == .disconnect(remove: []))
        #expect(machine.state == .stopped)
    }

    @Test func aConnectionLostWhileClosingStops() {
        var (machine, _) = online()
        _ = machine.stop(now: t0)
        #expect(machine.stop(now: t0) == .ignored, "closing already")
        #expect(machine.connectionLost("reset", now: t0) == .stopped(remove: []))
        #expect(machine.state == .stopped)
    }
}

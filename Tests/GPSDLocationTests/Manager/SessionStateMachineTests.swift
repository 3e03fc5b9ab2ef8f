@testable import GPSDLocation
import Testing

/// The session part of the manager's state machine as a value: every transition of its state diagram
/// (SessionState.swift), the halfway states, late reports and late timers, each named after the transition.
@Suite("The session's life as a value")
struct SessionStateMachineTests {
    /// A session that is only compared by identity.
    final class Session: SourceSession {
        func requestHeldFix() {}
        func close() {}
    }

    static let transient = LocationError(.connectionLost, "the peer hung up")
    /// Delays of 1, 2, 4, 8 s without jitter, so each is known.
    static let policy = ReconnectPolicy(initialDelay: .seconds(1), multiplier: 2, maximumDelay: .seconds(8), jitter: 0)

    /// A machine in a given state, reached through its inputs only.
    static func machine(_ policy: ReconnectPolicy = Self.policy) -> SessionStateMachine {
        var machine = SessionStateMachine(jitterSeed: 1)
        machine.reconnectPolicy = policy
        machine.staleTimeout = .seconds(5)
        return machine
    }

    static func opening() -> SessionStateMachine {
        var machine = machine()
        _ = machine.demandChanged(wanted: true)
        return machine
    }

    static func open(_ session: Session = Session()) -> SessionStateMachine {
        var machine = opening()
        _ = machine.opened(1, session, wanted: true)
        return machine
    }

    /// Open session 1 failed with a transient error and is closing, to reconnect after 1 s.
    static func closingToReconnect() -> SessionStateMachine {
        var machine = open()
        _ = machine.ended(by: transient)
        _ = machine.close(then: .reconnect(after: .seconds(1)))
        return machine
    }

    static func waiting() -> (SessionStateMachine, timer: Int) {
        var machine = closingToReconnect()
        guard case .reconnect(let timer) = machine.closed(1, wanted: true) else { return (machine, -1) }
        return (machine, timer.id)
    }

    // MARK: idle

    @Test func idleToOpeningWhenWanted() {
        var machine = Self.machine()
        guard case .open(let next) = machine.demandChanged(wanted: true) else { Issue.record("no opening"); return }
        #expect(next == .init(number: 1, attempt: 1, isFreshStart: true))
        guard case .opening(let opening) = machine.state else { Issue.record("\(machine.state)"); return }
        #expect(opening.number == 1 && opening.ended == nil)
        #expect(machine.isHalfway(upTo: 1) && machine.isCurrent(session: 1) && !machine.isConnected)
    }

    @Test func idleStaysIdleWhenNotWanted() {
        var machine = Self.machine()
        guard case .none = machine.demandChanged(wanted: false) else { Issue.record("acted"); return }
        guard case .idle = machine.state else { Issue.record("\(machine.state)"); return }
        #expect(machine.sessionCount == 0)
    }

    // MARK: opening

    @Test func openingToOpenWhenOpenedAndStillWanted() {
        var machine = Self.opening()
        let session = Session()
        guard case .open(let opened) = machine.opened(1, session, wanted: true) else { Issue.record("closed"); return }
        #expect(opened as? Session === session)
        #expect(machine.openSession as? Session === session)
        #expect(!machine.isHalfway(upTo: 1) && machine.isCurrent(session: 1))
    }

    @Test func openingToClosingWhenOpenedButNoLongerWanted() {
        var machine = Self.opening()
        let session = Session()
        guard case .close(let closing) = machine.opened(1, session, wanted: false) else { Issue.record("open"); return }
        #expect(closing.number == 1 && closing.session as? Session === session)
        guard case .closing(let state) = machine.state else { Issue.record("\(machine.state)"); return }
        #expect(state.then == .stop)
        #expect(machine.isHalfway(upTo: 1) && !machine.isCurrent(session: 1))
    }

    @Test func openingThatEndedBeforeItsOpeningReturnedClosesThenReconnects() {
        var machine = Self.opening()
        #expect(machine.ended(by: Self.transient) == .retry(after: .seconds(1), attempt: 2, because: Self.transient))
        #expect(machine.close(then: .reconnect(after: .seconds(1))) == nil)   // nothing to close yet: halfway
        guard case .opening(let opening) = machine.state else { Issue.record("\(machine.state)"); return }
        #expect(opening.ended == .reconnect(after: .seconds(1)))
        #expect(!machine.isCurrent(session: 1))   // its late events are ignored
        guard case .close = machine.opened(1, Session(), wanted: true) else { Issue.record("open"); return }
        guard case .closing(let closing) = machine.state else { Issue.record("\(machine.state)"); return }
        #expect(closing.then == .reconnect(after: .seconds(1)))
    }

    @Test func openingToIdleWhenItFailedToOpen() {
        var machine = Self.opening()
        guard case .stopped = machine.failedToOpen(1) else { Issue.record("ignored"); return }
        guard case .idle = machine.state else { Issue.record("\(machine.state)"); return }
        #expect(machine.failedAttempts == 0 && !machine.isHalfway(upTo: 1))
    }

    @Test func lateOpeningOfAnEarlierSessionIsClosedAndChangesNothing() {
        var machine = Self.open()
        let late = Session()
        guard case .close(let closing) = machine.opened(7, late, wanted: true) else { Issue.record("open"); return }
        #expect(closing.number == 7 && closing.session as? Session === late)
        guard case .open(let open) = machine.state else { Issue.record("\(machine.state)"); return }
        #expect(open.number == 1)
    }

    @Test func lateFailureToOpenIsIgnored() {
        var machine = Self.open()
        guard case .ignored = machine.failedToOpen(1) else { Issue.record("stopped"); return }
        guard case .open = machine.state else { Issue.record("\(machine.state)"); return }
    }

    @Test func openingStaysWhenWantedAgain() {
        var machine = Self.opening()
        guard case .none = machine.demandChanged(wanted: true) else { Issue.record("acted"); return }
        guard case .none = machine.demandChanged(wanted: false) else { Issue.record("acted"); return }   // decided at `opened`
        #expect(machine.sessionCount == 1)
    }

    // MARK: open

    @Test func openToClosingWhenNoLongerWanted() {
        var machine = Self.open()
        guard case .close(let closing) = machine.demandChanged(wanted: false) else { Issue.record("kept"); return }
        #expect(closing.number == 1)
        guard case .closing(let state) = machine.state else { Issue.record("\(machine.state)"); return }
        #expect(state.then == .stop && machine.openSession == nil)
    }

    @Test func openToClosingWhenItFailsWithRetriesLeft() {
        var machine = Self.open()
        #expect(machine.ended(by: Self.transient) == .retry(after: .seconds(1), attempt: 2, because: Self.transient))
        #expect(machine.failedAttempts == 1)
        let closing = machine.close(then: .reconnect(after: .seconds(1)))
        #expect(closing?.number == 1)
        #expect(machine.isHalfway(upTo: 1) && !machine.isCurrent(session: 1))
    }

    @Test func openEndsForGoodOnAFailureThatCannotPass() {
        var machine = Self.open()
        #expect(machine.ended(by: LocationError(.protocolError, "gpsd: unknown device")) == .end)
        #expect(machine.ended(by: nil) == .end)   // a recording's end
        #expect(machine.failedAttempts == 0)
        #expect(machine.close(then: .stop)?.number == 1)
    }

    @Test func openEndsForGoodWhenThePolicyForbidsRetries() {
        var machine = Self.machine(.never)
        _ = machine.demandChanged(wanted: true)
        _ = machine.opened(1, Session(), wanted: true)
        #expect(machine.ended(by: Self.transient) == .end)
        var capped = Self.machine(ReconnectPolicy(jitter: 0, maximumRetries: 1))
        _ = capped.demandChanged(wanted: true)
        #expect(capped.ended(by: Self.transient) == .retry(after: .milliseconds(250), attempt: 2, because: Self.transient))
        #expect(capped.ended(by: Self.transient) == .end)   // the second in a row is past the limit
    }

    @Test func openEndsForGoodWhenTheDelayMeansNever() {
        var machine = Self.machine(ReconnectPolicy(initialDelay: .seconds(Int64.max), maximumDelay: .seconds(Int64.max), jitter: 0))
        _ = machine.demandChanged(wanted: true)
        #expect(machine.ended(by: Self.transient) == .end)
        #expect(machine.failedAttempts == 0)
    }

    @Test func backoffGrowsWithEachFailureAndStartsOverOnceProvedGood() {
        var machine = Self.open()
        #expect(machine.ended(by: Self.transient) == .retry(after: .seconds(1), attempt: 2, because: Self.transient))
        #expect(machine.ended(by: Self.transient) == .retry(after: .seconds(2), attempt: 3, because: Self.transient))
        machine.provedGood()
        #expect(machine.ended(by: Self.transient) == .retry(after: .seconds(1), attempt: 2, because: Self.transient))
    }

    @Test func aConnectionThatHeldTenSecondsWasGoodAndOneThatDidNotWasNot() {
        var machine = Self.open()
        _ = machine.ended(by: Self.transient)   // one failure before
        _ = machine.connected(at: .seconds(100))
        #expect(machine.ended(by: Self.transient, failedAt: .seconds(109)) ==
            .retry(after: .seconds(2), attempt: 3, because: Self.transient))
        #expect(machine.ended(by: Self.transient, failedAt: .seconds(110)) ==
            .retry(after: .seconds(1), attempt: 2, because: Self.transient))
    }

    // MARK: closing

    @Test func closingToWaitingToReconnectWhenStillWanted() {
        var machine = Self.closingToReconnect()
        guard case .reconnect(let timer) = machine.closed(1, wanted: true) else { Issue.record("no timer"); return }
        #expect(timer.after == .seconds(1))
        guard case .waitingToReconnect(let waiting) = machine.state else { Issue.record("\(machine.state)"); return }
        #expect(waiting.timer == timer.id && !machine.isHalfway(upTo: .max))
    }

    @Test func closingToIdleWhenNothingWantsAReconnection() {
        var machine = Self.closingToReconnect()
        guard case .stopped = machine.closed(1, wanted: false) else { Issue.record("kept going"); return }
        guard case .idle = machine.state else { Issue.record("\(machine.state)"); return }
        #expect(machine.failedAttempts == 0)
    }

    @Test func closingToOpeningWhenWantedAgainWhileItClosed() {
        var machine = Self.open()
        _ = machine.demandChanged(wanted: false)
        guard case .open(let next) = machine.closed(1, wanted: true) else { Issue.record("no opening"); return }
        #expect(next == .init(number: 2, attempt: 1, isFreshStart: true))
    }

    @Test func closingToIdleWhenStoppedAndNotWanted() {
        var machine = Self.open()
        _ = machine.demandChanged(wanted: false)
        guard case .stopped = machine.closed(1, wanted: false) else { Issue.record("kept going"); return }
        guard case .idle = machine.state else { Issue.record("\(machine.state)"); return }
    }

    @Test func lateCloseOfAnotherSessionIsIgnored() {
        var machine = Self.closingToReconnect()
        guard case .ignored = machine.closed(2, wanted: true) else { Issue.record("acted"); return }
        guard case .closing = machine.state else { Issue.record("\(machine.state)"); return }
        var open = Self.open()
        guard case .ignored = open.closed(1, wanted: true) else { Issue.record("acted"); return }
    }

    // MARK: waiting to reconnect

    @Test func waitingToOpeningWhenTheTimerFiresAndFixesAreWanted() {
        var (machine, timer) = Self.waiting()
        guard case .open(let next) = machine.reconnectTimerFired(timer, wanted: true) else { Issue.record("\(machine.state)"); return }
        #expect(next == .init(number: 2, attempt: 2, isFreshStart: false))
    }

    @Test func waitingToIdleWhenTheTimerFiresAndNothingWantsFixes() {
        var (machine, timer) = Self.waiting()
        guard case .stopped = machine.reconnectTimerFired(timer, wanted: false) else { Issue.record("opened"); return }
        guard case .idle = machine.state else { Issue.record("\(machine.state)"); return }
        #expect(machine.failedAttempts == 0)
    }

    @Test func waitingToIdleWhenNothingWantsFixesAnyMore() {
        var (machine, timer) = Self.waiting()
        guard case .stopped = machine.demandChanged(wanted: false) else { Issue.record("kept waiting"); return }
        guard case .ignored = machine.reconnectTimerFired(timer, wanted: true) else { Issue.record("a late timer acted"); return }
    }

    @Test func lateReconnectTimerOfAnEarlierWaitIsIgnored() {
        var (machine, timer) = Self.waiting()
        guard case .ignored = machine.reconnectTimerFired(timer + 100, wanted: true) else { Issue.record("acted"); return }
        guard case .waitingToReconnect = machine.state else { Issue.record("\(machine.state)"); return }
        guard case .none = machine.demandChanged(wanted: true) else { Issue.record("opened early"); return }
    }

    // MARK: Connection and the watchdog

    @Test func connectingWhileOpeningCountsForTheSessionOnceOpen() {
        var machine = Self.opening()
        #expect(machine.connected(at: .seconds(3)) == .init(id: 1, after: .seconds(5)))
        #expect(machine.isConnected)
        _ = machine.opened(1, Session(), wanted: true)
        #expect(machine.isConnected)
        _ = machine.ended(by: Self.transient)
        _ = machine.close(then: .stop)
        #expect(!machine.isConnected)   // a request subscribing now has not seen this connection
    }

    @Test func watchdogReportsStaleAfterSilence() {
        var machine = Self.open()
        let timer = machine.connected(at: .seconds(10))
        #expect(timer?.after == .seconds(5))
        #expect(machine.reported(at: .seconds(12)) == nil)   // one timer at a time
        #expect(machine.watchdogFired(timer!.id, now: .seconds(15)) == .rescheduled(.init(id: 2, after: .seconds(2))))
        #expect(machine.watchdogFired(2, now: .seconds(17)) == .stale(silentFor: .seconds(5)))
        #expect(machine.reported(at: .seconds(18)) == .init(id: 3, after: .seconds(5)))   // starts again
    }

    @Test func lateWatchdogTimerIsIgnored() {
        var machine = Self.open()
        let timer = machine.connected(at: .zero)!
        _ = machine.demandChanged(wanted: false)   // closing drops the watchdog
        #expect(machine.watchdogFired(timer.id, now: .seconds(60)) == .ignored)
    }

    @Test func watchdogOfASessionStillOpeningIsIgnored() {
        var machine = Self.opening()
        let timer = machine.connected(at: .zero)!
        #expect(machine.watchdogFired(timer.id, now: .seconds(60)) == .ignored)
        #expect(machine.reported(at: .seconds(61)) != nil)   // the next report starts it again
    }
}

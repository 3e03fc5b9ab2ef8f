@testable import GPSDLocation
import Testing

/// The linger of the session part as a value: an open session that the last one-shot request left stays open until
/// its timer, demand that comes back calls it off, and anything else that ends demand closes it at once.
@Suite("The session's linger as a value")
struct SessionLingerStateTests {
    typealias Session = SessionStateMachineTests.Session

    static func open(linger: Duration = .seconds(3)) -> SessionStateMachine {
        var machine = SessionStateMachineTests.open()
        machine.linger = linger
        return machine
    }

    /// Open, then left by the last one-shot request: lingering, with its timer.
    static func lingering() -> (SessionStateMachine, timer: SessionStateMachine.Timer?) {
        var machine = open()
        guard case .linger(let timer) = machine.demandChanged(wanted: false, lingering: true) else { return (machine, nil) }
        return (machine, timer)
    }

    @Test func openToLingeringWhenTheLastRequestLeaves() throws {
        let (machine, timer) = Self.lingering()
        #expect(try #require(timer).after == .seconds(3))
        #expect(machine.isLingering && machine.openSession != nil && !machine.isHalfway(upTo: 1))
    }

    @Test func lingeringToClosingWhenItsTimerFires() throws {
        var (machine, timer) = Self.lingering()
        guard case .close(let closing) = machine.lingerTimerFired(try #require(timer).id, wanted: false) else {
            Issue.record("not closed: \(machine.state)")
            return
        }
        #expect(closing.number == 1)
        guard case .closing(let state) = machine.state else { Issue.record("\(machine.state)"); return }
        #expect(state.then == .stop)
    }

    @Test func lingeringToOpenWhenWantedAgain() throws {
        var (machine, timer) = Self.lingering()
        guard case .none = machine.demandChanged(wanted: true) else { Issue.record("\(machine.state)"); return }
        #expect(!machine.isLingering && machine.openSession != nil)
        guard case .ignored = machine.lingerTimerFired(try #require(timer).id, wanted: true) else {
            Issue.record("a called-off linger's timer acted")
            return
        }
        guard case .ignored = machine.lingerTimerFired(try #require(timer).id, wanted: false) else {
            Issue.record("a called-off linger's timer closed the session later wanted again and left")
            return
        }
        #expect(machine.openSession != nil)
    }

    @Test func aSecondLingerHasATimerOfItsOwn() throws {
        var (machine, first) = Self.lingering()
        _ = machine.demandChanged(wanted: true)
        guard case .linger(let second) = machine.demandChanged(wanted: false, lingering: true) else {
            Issue.record("\(machine.state)")
            return
        }
        #expect(second.id != (try #require(first).id))
        guard case .ignored = machine.lingerTimerFired(try #require(first).id, wanted: false) else {
            Issue.record("the first linger's timer closed the second")
            return
        }
        guard case .close = machine.lingerTimerFired(second.id, wanted: false) else { Issue.record("not closed"); return }
    }

    @Test func lingeringToClosingAtOnceWhenDemandEndsOtherwise() {
        var (machine, _) = Self.lingering()
        guard case .close(let closing) = machine.demandChanged(wanted: false) else {
            Issue.record("a stop left the lingering session open: \(machine.state)")
            return
        }
        #expect(closing.number == 1)
    }

    @Test func aLingeringSessionGoesOnLingeringWhenLeftAgain() {
        var (machine, _) = Self.lingering()
        guard case .none = machine.demandChanged(wanted: false, lingering: true) else {
            Issue.record("\(machine.state)")
            return
        }
        #expect(machine.isLingering)
    }

    @Test func openToClosingWithoutALinger() {
        var machine = Self.open(linger: .zero)
        guard case .close = machine.demandChanged(wanted: false, lingering: true) else {
            Issue.record("a zero linger lingered: \(machine.state)")
            return
        }
    }

    @Test func aLingerOfNeverSetsNoTimerAndKeepsTheSessionOpen() {
        var machine = Self.open(linger: .never)
        guard case .none = machine.demandChanged(wanted: false, lingering: true) else {
            Issue.record("\(machine.state)")
            return
        }
        #expect(machine.isLingering)
        guard case .close = machine.demandChanged(wanted: false) else { Issue.record("a stop left it open"); return }
    }

    @Test func aFailureWhileLingeringEndsTheLinger() throws {
        var (machine, timer) = Self.lingering()
        _ = machine.ended(by: SessionStateMachineTests.transient)
        _ = machine.close(then: .stop)
        #expect(!machine.isLingering)
        guard case .ignored = machine.lingerTimerFired(try #require(timer).id, wanted: false) else {
            Issue.record("a late linger timer acted on a closing session")
            return
        }
    }

    @Test func openingIsNotLingering() {
        var machine = SessionStateMachineTests.opening()
        machine.linger = .seconds(3)
        guard case .none = machine.demandChanged(wanted: false, lingering: true) else {
            Issue.record("\(machine.state)")
            return
        }
        #expect(!machine.isLingering, "it closes when its opening returns, as before")
    }
}

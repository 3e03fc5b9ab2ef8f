import Foundation
@testable import GPSDLocation
import GPSDTestSupport
import Testing

/// The top state machine's inputs, each answered with a ``LocationManagerStateMachine/Decision``, tested as values:
/// no lock, no thread, no clock.
@Suite("The manager's decisions, as values")
struct DecisionTests {
    typealias Machine = LocationManagerStateMachine

    private static let arrival = Location.Arrival(instant: .now, date: .now, delay: nil)
    private static let lost = LocationError(.connectionLost, "connection to gpsd at localhost:2947 lost")

    /// A machine whose delegate's updates opened session 1, which is open and connected.
    private static func connected() throws -> Machine {
        var machine = Machine(requestTimeout: .seconds(30), jitterSeed: 1)
        let opening = machine.startUpdating()
        guard case .open(number: 1) = opening.transition else { throw Failure("no opening: \(opening)") }
        #expect(machine.sessionOpened(1, NoSession()).isEmpty)
        let connected = machine.handle([.connected], session: 1, now: .seconds(1), arrival: arrival)
        guard connected.timers.count == 1, case .watchdog(_, let after) = connected.timers[0],
              after == LocationManager.defaultStaleTimeout else { throw Failure("no watchdog: \(connected)") }
        return machine
    }

    private static func statuses(_ decision: Machine.Decision) -> [LocationStatus] {
        decision.delegateCalls.compactMap { if case .status(let status) = $0.kind { status } else { nil } }
    }

    @Test func startingUpdatesOpensASessionAndTellsTheDelegateItConnects() {
        var machine = Machine(requestTimeout: .seconds(30), jitterSeed: 1)
        let decision = machine.startUpdating()
        guard case .open(number: 1) = decision.transition else {
            Issue.record("no opening: \(decision)")
            return
        }
        #expect(Self.statuses(decision) == [.connecting(attempt: 1)])
        #expect(decision.notifications.isEmpty && decision.timers.isEmpty)
    }

    @Test func aRequestOpensASessionAndSetsItsTimeout() {
        var machine = Machine(requestTimeout: .seconds(30), jitterSeed: 1)
        let decision = machine.requestLocation()
        guard case .open = decision.transition, decision.timers.count == 1,
              case .requestTimeout(_, let after) = decision.timers[0] else {
            Issue.record("\(decision)")
            return
        }
        #expect(after == .seconds(30))
    }

    @Test func aFixGoesToTheDelegateInItsGeneration() throws {
        var machine = try Self.connected()
        let fix = Location.sample(second: 1)
        let decision = machine.handle([.report(.fix(fix))], session: 1, now: .seconds(2), arrival: Self.arrival)
        let fixes = decision.delegateCalls.compactMap { call -> [Location]? in
            if case .locations(let locations) = call.kind, call.generation == 0 { locations } else { nil }
        }
        #expect(fixes == [[fix]])
        #expect(decision.timers.isEmpty, "the watchdog armed by the connection measures from the newest report")
        #expect(decision.transition == nil)
    }

    @Test func reportsOfAnotherSessionDecideNothing() throws {
        var machine = try Self.connected()
        let decision = machine.handle([.report(.fix(.sample(second: 1)))], session: 2, now: .seconds(2), arrival: Self.arrival)
        #expect(decision.isEmpty)
    }

    @Test func aLostConnectionClosesTheSessionThenItsClosingSetsTheReconnectTimer() throws {
        var machine = try Self.connected()
        let failing = machine.handle([.failed(Self.lost)], session: 1, now: .seconds(2), arrival: Self.arrival)
        guard case .close(number: 1, _) = failing.transition else {
            Issue.record("no closing: \(failing)")
            return
        }
        #expect(Self.statuses(failing).count == 1)
        guard case .reconnecting(_, _, Self.lost) = Self.statuses(failing).first else {
            Issue.record("\(Self.statuses(failing))")
            return
        }
        let closed = machine.sessionClosed(1)
        #expect(closed.transition == nil)
        guard closed.timers.count == 1, case .reconnect = closed.timers[0] else {
            Issue.record("no reconnect timer: \(closed)")
            return
        }
    }

    @Test func aFatalFailureEndsAStreamWithItsFixesFirstAndClosesTheSessionLast() throws {
        var machine = try Self.connected()
        var configuration = machine.configuration
        configuration.reconnectPolicy = .never
        machine.configure(configuration)
        let consumer = NoticeSink()
        let id = machine.subscriptions.reserve()
        _ = machine.subscribe(id, .continuous(delivery: .asReported), consumer)
        let fix = Location.sample(second: 1)
        let decision = machine.handle([.report(.fix(fix)), .failed(Self.lost)], session: 1, now: .seconds(2),
                                      arrival: Self.arrival)
        let batches = decision.notifications.batches
        #expect(batches.count == 1 && batches.first?.consumer === consumer)
        let events = batches.first?.notices.map(\.event) ?? []
        #expect(events.first == .location(fix))
        #expect(events.last == .ended(Self.lost))
        guard case .close(number: 1, _) = decision.transition else {
            Issue.record("no closing: \(decision)")
            return
        }
    }

    @Test func stoppingTheOnlyConsumerClosesTheSession() throws {
        var machine = try Self.connected()
        guard case .close(number: 1, _) = machine.stopUpdating().transition else {
            Issue.record("no closing")
            return
        }
    }

    @Test func settingsAreAnInputTheirTimeoutsBounded() throws {
        var machine = try Self.connected()
        var configuration = machine.configuration
        configuration.requestTimeout = .seconds(-5)
        configuration.staleTimeout = .seconds(200 * 365 * 86_400)
        configuration.desiredAccuracy = 3
        machine.configure(configuration)
        #expect(machine.configuration.requestTimeout == .zero)
        #expect(machine.configuration.staleTimeout == .never)
        #expect(machine.configuration.desiredAccuracy == 3)
        // The desired accuracy now keeps a 5 m fix from the delegate.
        let decision = machine.handle([.report(.fix(.sample(second: 1, accuracy: 5)))], session: 1, now: .seconds(2),
                                      arrival: Self.arrival)
        #expect(!decision.delegateCalls.contains { if case .locations = $0.kind { true } else { false } })
    }
}

/// The threads a manager keeps track of, as a value.
@Suite("The manager's threads, as a value")
struct ManagerThreadsTests {
    typealias Callback = ManagerThreads.Callback

    @Test func aStopWaitsOnlyForCallbacksOfItsKindFromEarlierGenerations() {
        var threads = ManagerThreads()
        threads.callbackBegan(Callback(thread: 1, generation: 0, isHeading: false))
        threads.callbackBegan(Callback(thread: 2, generation: 0, isHeading: true))
        #expect(threads.runsCallback(headings: false, before: 1))
        #expect(!threads.runsCallback(headings: false, before: 0))
        #expect(threads.runsCallback(headings: true, before: 1))
        threads.callbackReturned(Callback(thread: 1, generation: 0, isHeading: false))
        #expect(!threads.runsCallback(headings: false, before: 1))
        #expect(threads.runsCallback(headings: true, before: 1), "a heading's callback is not a fix's")
    }

    @Test func aNestedCallbackReturnsBeforeTheOneAroundIt() {
        var threads = ManagerThreads()
        let outer = Callback(thread: 1, generation: 0, isHeading: false)
        let inner = Callback(thread: 1, generation: 1, isHeading: false)
        threads.callbackBegan(outer)
        threads.callbackBegan(inner)
        threads.callbackReturned(inner)
        #expect(threads.callbacks == [outer])
        #expect(threads.isInCallback(1) && !threads.isInCallback(2))
        threads.callbackReturned(outer)
        #expect(!threads.isInCallback(1))
    }

    @Test func theThreadThatDecidesATransitionCarriesItUntilTheSessionsSettle() {
        var threads = ManagerThreads()
        threads.decided(transition: true, on: 7, settled: false)
        #expect(threads.carriesTransition(7))
        threads.decided(transition: false, on: 8, settled: false)
        #expect(threads.carriesTransition(7), "another decision meanwhile does not take it")
        threads.handedOff(from: 8)
        #expect(threads.carriesTransition(7), "only the carrying thread hands it off")
        threads.decided(transition: false, on: 8, settled: true)
        #expect(!threads.carriesTransition(7))
        threads.decided(transition: true, on: 9, settled: false)
        threads.handedOff(from: 9)
        #expect(!threads.carriesTransition(9))
    }

    @Test func aSessionClosedOnItsOwnThreadIsJoinedByAnotherOnly() {
        var threads = ManagerThreads()
        let (own, other) = (NoSession(onItsThread: true), NoSession(onItsThread: false))
        threads.closedOnItsOwnThread(own)
        threads.closedOnItsOwnThread(other)
        #expect(threads.takeJoinable().map { ($0 as? NoSession)?.onItsThread } == [false])
        #expect(threads.unjoined.count == 1, "its own is left for another thread")
        #expect(threads.takeJoinable().isEmpty)
    }
}

private struct NoSession: SourceSession {
    var onItsThread = false
    func close() {}
    func requestHeldFix() {}
    var isOnItsThread: Bool { onItsThread }
}

private final class NoticeSink: SubscriptionConsumer {
    func receive(_ notices: [SubscriptionNotice]) {}
}

private struct Failure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

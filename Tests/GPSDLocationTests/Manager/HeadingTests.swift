import Foundation
@testable import GPSDLocation
import GPSDSystem
import GPSDTestSupport
import Testing

/// Headings through the subscription table (as a value) and the manager: who takes them, the filter, and that
/// headings and fixes keep apart.
@Suite("Headings")
struct HeadingTests {
    typealias Consumer = SubscriptionTableTests.Consumer

    private static func heading(_ degrees: Double, second: Int = 0) -> Heading {
        Heading(trueHeading: degrees, timestamp: NMEA.Track.time(second), device: "/dev/test")
    }

    // MARK: The table

    @Test func startDelegateHeadingsWantsASessionAndTheStatus() {
        var table = SubscriptionTable()
        table.startDelegateHeadings()
        #expect(table.wantsSession)
        #expect(table.delegateSubscribed)
        table.stopDelegateHeadings()
        #expect(!table.wantsSession)
        #expect(table.headingGeneration == 1)
        #expect(table.generation == 0, "the delegate's fixes decided before go on")
    }

    @Test func theDelegatesFilterTakesAHeadingOneDegreeOnByDefaultRoundNorth() {
        var table = SubscriptionTable()
        table.startDelegateHeadings()
        let taken = [359.5, 0.25, 0.5, 1.0, 1.5, 359.0].map { table.deliver(Self.heading($0)).toDelegate }
        // 359.5 (the first), 0.5 (1° on, across north), 1.5, 359.0 (2.5° back).
        #expect(taken == [true, false, true, false, true, true])
    }

    @Test(arguments: [nil, 0.0] as [Double?])
    func noFilterTakesEveryHeading(filter: Double?) {
        var table = SubscriptionTable()
        table.headingFilter = filter
        table.startDelegateHeadings()
        #expect([10.0, 10.0, 10.1].allSatisfy { table.deliver(Self.heading($0)).toDelegate })
    }

    @Test func aStreamHasItsOwnFilterAndTakesNoFixes() throws {
        var table = SubscriptionTable()
        let (headings, fixes) = (Consumer(), Consumer())
        let headingID = try SubscriptionTableTests.subscribe(&table, .headings(filter: 10), headings)
        let fixID = try SubscriptionTableTests.subscribe(&table, .continuous(), fixes)
        table.startDelegateHeadings()   // the delegate's filter (1°) is not the stream's
        let fix = table.deliver(Location.sample(second: 1), held: false)
        #expect(SubscriptionTableTests.notices(fix.notifications, for: headings).isEmpty)
        #expect(!fix.toDelegate)
        #expect(SubscriptionTableTests.notices(fix.notifications, for: fixes).map(\.id) == [fixID])
        var toStream: [Double] = []
        var toDelegate: [Double] = []
        for degrees in [100.0, 105.0, 111.0, 111.5] {
            let delivery = table.deliver(Self.heading(degrees))
            #expect(SubscriptionTableTests.notices(delivery.notifications, for: fixes).isEmpty)
            for notice in SubscriptionTableTests.notices(delivery.notifications, for: headings) {
                #expect(notice.id == headingID)
                if case .heading(let heading) = notice.event { toStream.append(heading.trueHeading) }
            }
            if delivery.toDelegate { toDelegate.append(degrees) }
        }
        #expect(toStream == [100, 111])
        #expect(toDelegate == [100, 105, 111])
    }

    @Test func stoppingTheDelegatesFixesLeavesItsHeadings() {
        var table = SubscriptionTable()
        table.startDelegateUpdates()
        table.startDelegateHeadings()
        table.stopDelegate()
        #expect(table.wantsSession)
        #expect(table.deliver(Self.heading(10)).toDelegate)
    }

    @Test func theEndOfEverythingEndsAHeadingStream() throws {
        var table = SubscriptionTable()
        let consumer = Consumer()
        let id = try SubscriptionTableTests.subscribe(&table, .headings(filter: nil), consumer)
        let ending = table.endAll(with: SubscriptionTableTests.failure, latest: nil)
        let notices = SubscriptionTableTests.notices(ending.notifications, for: consumer)
        #expect(notices.map(\.id) == [id])
        #expect(SubscriptionTableTests.reason(notices.first?.event)?.code == .connectionLost)
        #expect(!table.wantsSession)
    }

    // MARK: The state machine

    @Test func anATTGoesToTheDelegateAndACourseNever() {
        var machine = LocationManagerStateMachine(requestTimeout: .seconds(30), jitterSeed: 1)
        let opening = machine.startUpdatingHeading()
        guard case .open(let number) = opening.transition else {
            Issue.record("expected an opening, got \(opening)")
            return
        }
        _ = machine.sessionOpened(number, NoSource.Session())
        func handle(_ report: GPSDReport) -> LocationManagerStateMachine.Decision {
            let arrival = Location.Arrival(instant: .now, date: .now, delay: nil)
            return machine.handle([.report(report)], session: number, now: .seconds(1), arrival: arrival)
        }
        var moving = Location.sample(second: 1)
        moving.course = 46.5
        let fixDecision = handle(.fix(moving))
        #expect(!fixDecision.delegateCalls.contains { $0.isHeading })
        #expect(machine.heading == nil)
        let heading = Self.heading(46.5, second: 1)
        let decision = handle(.attitude(heading, timed: false))
        #expect(decision.delegateCalls.contains {
            if case .heading(heading) = $0.kind { $0.generation == 0 } else { false }
        })
        #expect(machine.heading == heading)
        let closing = machine.stopUpdatingHeading()
        guard case .close = closing.transition else {
            Issue.record("expected a closing, got \(closing)")
            return
        }
        #expect(machine.heading == heading, "kept, as the newest fix is")
    }
}

/// What the state machine is handed as an opened session in a value test: nothing to close.
private enum NoSource {
    struct Session: SourceSession {
        func close() {}
        func requestHeldFix() {}
        var isOnItsThread: Bool { false }
    }
}

/// ``LocationManager/startUpdatingHeading()`` and the delegate, on a ``ManagerRig``.
@Suite("LocationManager: headings")
struct LocationManagerHeadingTests: ManagerTesting {
    let rig = ManagerRig()

    private func heading(_ degrees: Double, second: Int) -> Heading {
        Heading(trueHeading: degrees, timestamp: NMEA.Track.time(second), device: "/dev/test")
    }

    @Test func headingsReachTheDelegateThroughItsFilterAndKeepTheWatchApartFromFixes() {
        manager.headingFilter = 5
        manager.startUpdatingHeading()
        #expect(source.isRunning)
        let sent = [heading(10, second: 0), heading(12, second: 1), heading(16, second: 2)]
        for heading in sent { source.send(.report(.attitude(heading, timed: false))) }
        source.send(Location.sample(second: 3))
        drain()
        #expect(delegate.headings == [sent[0], sent[2]])
        #expect(delegate.locations.isEmpty, "fixes are not asked for")
        #expect(manager.heading == sent[2])
        manager.startUpdatingLocation()
        manager.stopUpdatingHeading()
        #expect(source.isRunning, "location updates keep the watch")
        source.send(.report(.attitude(heading(90, second: 4), timed: false)))
        source.send(Location.sample(second: 4))
        drain()
        #expect(delegate.headings == [sent[0], sent[2]])
        #expect(delegate.locations == [Location.sample(second: 4)])
        #expect(manager.heading == heading(90, second: 4), "the newest, whoever wants it")
        manager.stopUpdatingLocation()
        #expect(!source.isRunning)
    }

    @Test func aHeadingDecidedBeforeStopUpdatingHeadingIsNotDelivered() {
        let queue = DispatchQueue(label: "held")
        let rig = ManagerRig(delegateQueue: queue)
        rig.manager.startUpdatingHeading()
        queue.suspend()
        rig.source.send(.report(.attitude(heading(10, second: 0), timed: false)))
        rig.manager.stopUpdatingHeading()
        queue.resume()
        rig.manager.delegateQueue.sync {}
        #expect(rig.delegate.headings.isEmpty)
    }

    /// Each stop waits for the callbacks of its own kind that began before it, never for the other kind's: a
    /// heading callback that runs on does not hold up a stop of fixes, and a stop of headings waits for it.
    @Test(.timeLimit(.minutes(1)))
    func eachStopWaitsForItsOwnCallbacksOnly() async {
        let queue = DispatchQueue(label: "concurrent delegate", attributes: .concurrent)
        let rig = ManagerRig(delegateQueue: queue)
        let delegate = HeldHeadingDelegate()
        rig.manager.delegate = delegate
        rig.manager.startUpdatingLocation()
        rig.manager.startUpdatingHeading()
        rig.source.send(.report(.attitude(heading(10, second: 0), timed: false)))
        await onThread { delegate.inside.wait() }
        // Nothing releases the heading callback yet: a stop of fixes that waited for it would never return.
        await onThread { rig.manager.stopUpdatingLocation() }
        #expect(rig.source.isRunning, "headings keep the watch")
        let stop = Task { await onThread { rig.manager.stopUpdatingHeading(); return delegate.returned.withLock { $0 } } }
        await rig.source.waitUntilIdle()   // the stop has closed the session, and waits
        delegate.release.signal()
        #expect(await stop.value, "the stop of headings returned once the heading callback had")
    }
}

/// A delegate whose heading callback waits, inside, until released.
private final class HeldHeadingDelegate: LocationManagerDelegate {
    let inside = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let returned = Locked(false)

    func locationManager(_ manager: LocationManager, didUpdateLocations locations: [Location]) {}
    func locationManager(_ manager: LocationManager, didFailWithError error: any Error) {}

    func locationManager(_ manager: LocationManager, didUpdateHeading heading: Heading) {
        inside.signal()
        release.wait()
        returned.withLock { $0 = true }
    }
}

/// ``AsyncLocationManager/headingUpdates(filter:bufferingPolicy:)`` on a scripted source.
@Suite("Async heading updates", .timeLimit(.minutes(1)))
struct HeadingUpdatesTests {
    private func heading(_ degrees: Double, second: Int) -> Heading {
        Heading(trueHeading: degrees, timestamp: NMEA.Track.time(second), device: "/dev/test")
    }

    @Test func headingUpdatesWatchGPSDAndTakeEachHeadingPastTheFilter() async throws {
        let rig = AsyncRig()
        let updates = rig.gps.headingUpdates(filter: 2)
        await rig.source.waitForOpening()
        let sent = [350.0, 351.0, 352.5, 0.5, 0.0].enumerated().map { heading($1, second: $0) }
        rig.source.send(sent.map { .report(.attitude($0, timed: false)) } + [.report(.fix(.sample(second: 5)))])
        var iterator = updates.makeAsyncIterator()
        var received: [Heading] = []
        for _ in 0..<3 { received.append(try #require(try await iterator.next())) }
        #expect(received == [sent[0], sent[2], sent[3]])
        await rig.gps.stop()
        #expect(try await iterator.next() == nil)
        await rig.source.waitUntilIdle()
        #expect(!rig.source.isRunning, "the sequence held the watch")
    }

    @Test func aFatalFailureEndsHeadingUpdatesWithTheError() async throws {
        let rig = AsyncRig()
        let updates = rig.gps.headingUpdates()
        await rig.source.waitForOpening()
        rig.source.send(.failed(LocationError(.protocolError, "gpsd: refused")))
        let error = await #expect(throws: LocationError.self) {
            for try await _ in updates {}
        }
        #expect(error?.code == .protocolError)
    }

    @Test func cancellingTheConsumersTaskEndsHeadingUpdatesAndStopsTheWatch() async throws {
        let rig = AsyncRig()
        let gps = rig.gps
        let (progress, reached) = AsyncStream.makeStream(of: Heading.self)
        let consumer = Task {
            var count = 0
            for try await heading in gps.headingUpdates(filter: nil) {
                count += 1
                reached.yield(heading)
            }
            return count
        }
        await rig.source.waitForOpening()
        rig.source.send(.report(.attitude(heading(10, second: 0), timed: false)))
        var reachedHeadings = progress.makeAsyncIterator()
        #expect(await reachedHeadings.next() == heading(10, second: 0), "the consumer is iterating")
        consumer.cancel()
        #expect(try await consumer.value == 1, "the sequence ends without an error")
        // The cancellation gave the watch back; its session is closed on a thread of its own (a cancellation
        // handler must not block), maybe just after the consumer has ended.
        await rig.source.waitUntilIdle()
        #expect(!rig.source.isRunning)
        #expect(!rig.source.send(.report(.attitude(heading(20, second: 1), timed: false))))
    }
}

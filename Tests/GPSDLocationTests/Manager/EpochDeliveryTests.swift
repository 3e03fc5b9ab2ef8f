import Foundation
import GPSDLocation
import GPSDSystem
import GPSDTestSupport
import Testing

/// `updates(delivery: .oncePerEpoch)`: one record per epoch, the most complete, passed on when the epoch is
/// over; `.asReported` (the default) beside it on the same manager, unchanged.
@Suite("Epoch delivery", .timeLimit(.minutes(1)))
struct EpochDeliveryTests {
    private let connectionLost = LocationError(.connectionLost, "connection to gpsd at localhost:2947 lost")

    /// The first report of an epoch (RMC: no altitude, no climb), as gpsd sends it before GGA completes it.
    private func partial(_ second: Int) -> Location {
        var fix = Location.sample(second: second)
        fix.altitude = nil
        fix.ellipsoidalAltitude = nil
        fix.verticalAccuracy = nil
        fix.fix = .twoDimensional
        return fix
    }

    /// Epochs of two reports each, as gpsd sends them for RMC then GGA: the partial record, then the complete one.
    private func sendEpochs(_ seconds: ClosedRange<Int>, to rig: AsyncRig) {
        for second in seconds {
            rig.source.send(partial(second))
            rig.source.send(Location.sample(second: second))
        }
    }

    private func collect(_ updates: LocationUpdates) async throws -> [Location] {
        var received: [Location] = []
        for try await fix in updates { received.append(fix) }
        return received
    }

    @Test func severalReportsPerEpochBecomeOneCompleteRecord() async throws {
        let rig = AsyncRig()
        let once = rig.gps.updates(delivery: .oncePerEpoch)
        let asReported = rig.gps.updates()
        await rig.source.waitForOpening()
        sendEpochs(1...3, to: rig)
        rig.source.send(.finished)
        let complete = (1...3).map { Location.sample(second: $0) }
        // The last epoch is passed on when the recording ends: nothing is lost.
        #expect(try await collect(once) == complete)
        #expect(try await collect(asReported) == (1...3).flatMap { [partial($0), Location.sample(second: $0)] })
    }

    @Test func anEpochIsPassedOnOnlyWhenTheNextBegins() async throws {
        let rig = AsyncRig()
        let updates = rig.gps.updates(delivery: .oncePerEpoch)
        var iterator = updates.makeAsyncIterator()
        await rig.source.waitForOpening()
        rig.source.send(partial(1))
        rig.source.send(Location.sample(second: 1))
        rig.source.send(partial(2))   // epoch 1 is over
        #expect(try await iterator.next() == Location.sample(second: 1))
        rig.source.send(.finished)
        #expect(try await iterator.next() == partial(2))   // the most complete record epoch 2 had
        #expect(try await iterator.next() == nil)
    }

    @Test func anEpochIsPassedOnAsSoonAsItBringsAsManyReportsAsTheLastTwo() async throws {
        let rig = AsyncRig()
        let updates = rig.gps.updates(delivery: .oncePerEpoch)
        var iterator = updates.makeAsyncIterator()
        await rig.source.waitForOpening()
        sendEpochs(1...2, to: rig)
        rig.source.send(partial(3))   // epochs 1 and 2 brought two reports each
        #expect(try await iterator.next() == Location.sample(second: 1))
        #expect(try await iterator.next() == Location.sample(second: 2))
        // Epoch 3's second report completes it: it is passed on now, with no report of epoch 4 sent. (Were it held
        // until the next epoch, this would wait until the suite's time limit.)
        rig.source.send(Location.sample(second: 3))
        #expect(try await iterator.next() == Location.sample(second: 3))
        rig.source.send(partial(4))
        rig.source.send(Location.sample(second: 4))
        #expect(try await iterator.next() == Location.sample(second: 4))
        rig.source.send(.finished)
        #expect(try await iterator.next() == nil, "each epoch once")
    }

    @Test func aRealTimeHandlerGetsACompleteEpochBeforeTheNextBegins() async throws {
        let rig = AsyncRig()
        let (fixes, continuation) = AsyncStream.makeStream(of: Location.self)
        let subscription = rig.gps.manager.realTimeUpdates(delivery: .oncePerEpoch) { continuation.yield($0) }
        await rig.source.waitForOpening()
        sendEpochs(1...3, to: rig)
        var iterator = fixes.makeAsyncIterator()
        // Epochs 1 and 2 when the next began; epoch 3 at its second report, with nothing after it.
        for second in 1...3 { #expect(await iterator.next() == Location.sample(second: second)) }
        await subscription.cancel()
    }

    @Test func aReportAfterTheEpochWasCompleteIsNotPassedOnAgain() async throws {
        let rig = AsyncRig()
        let updates = rig.gps.updates(delivery: .oncePerEpoch)
        await rig.source.waitForOpening()
        sendEpochs(1...3, to: rig)
        // A GST after epoch 3 was judged complete: it completes the record, which was passed on already.
        let fix = Location.sample(second: 3)
        rig.source.send(.report(.deviation(Location.Deviation(latitude: 0.8, longitude: 0.6, altitude: 1.9),
                                           device: fix.device, time: fix.timestamp)))
        rig.source.send(.finished)
        #expect(try await collect(updates) == (1...3).map { Location.sample(second: $0) })
    }

    @Test func losingTheFixEndsTheEpoch() async throws {
        let rig = AsyncRig()
        let updates = rig.gps.updates(delivery: .oncePerEpoch)
        var iterator = updates.makeAsyncIterator()
        await rig.source.waitForOpening()
        rig.source.send(Location.sample(second: 1))
        rig.source.send(.report(.noFix(device: "/dev/test", time: nil)))
        #expect(try await iterator.next() == Location.sample(second: 1))
    }

    @Test func aReceiverThatGoesAwayEndsItsEpoch() async throws {
        let rig = AsyncRig()
        let updates = rig.gps.updates(delivery: .oncePerEpoch)
        var iterator = updates.makeAsyncIterator()
        await rig.source.waitForOpening()
        rig.source.send(Location.sample(second: 1, device: "/dev/other"))
        rig.source.send(Location.sample(second: 1))
        // gpsd's DEVICE report with "activated":0: /dev/test was unplugged; /dev/other's epoch stays open.
        rig.source.send(.report(.device(path: "/dev/test", active: false)))
        #expect(try await iterator.next() == Location.sample(second: 1))
        rig.source.send(.report(.device(path: "/dev/other", active: false)))
        #expect(try await iterator.next() == Location.sample(second: 1, device: "/dev/other"))
    }

    @Test func aReceiverNamedAfreshInEveryReportIsKeptWithinBoundsAndLosesNoFix() async throws {
        let rig = AsyncRig()
        let updates = rig.gps.updates(delivery: .oncePerEpoch, bufferingPolicy: .unbounded)
        await rig.source.waitForOpening()
        var most = 0
        for second in 1...1_000 {
            rig.source.send(Location.sample(second: second, device: "/dev/x\(second)"))
            if second % 3 == 0 { rig.source.send(.report(.noFix(device: "/dev/x\(second)", time: nil))) }
            most = max(most, rig.gps.manager.receiversKept)
        }
        rig.source.send(.finished)
        let received = try await collect(updates)
        #expect(received.count == 1_000, "every receiver's epoch, once")
        #expect(Set(received.compactMap(\.device)).count == 1_000)
        #expect(most <= 64, "\(most) receivers kept at once")
    }

    @Test func forgettingTheFirstReceiverLeavesTheOthersExact() async throws {
        let rig = AsyncRig()
        let once = rig.gps.updates(delivery: .oncePerEpoch, bufferingPolicy: .unbounded)
        let asReported = rig.gps.updates(bufferingPolicy: .unbounded)
        await rig.source.waitForOpening()
        func partial(of device: String) -> Location {
            var fix = self.partial(1)
            fix.device = device
            return fix
        }
        for receiver in 0..<64 { rig.source.send(partial(of: "/dev/r\(receiver)")) }
        rig.source.send(Location.sample(second: 1, device: "/dev/new"))   // the 65th: /dev/r0 is forgotten
        let complete = Location.sample(second: 1, device: "/dev/r1")
        rig.source.send(complete)   // completes /dev/r1's epoch
        rig.source.send(complete)   // the same again
        rig.source.send(.finished)
        let epochs = try await collect(once)
        #expect(epochs.count == 65, "every receiver's epoch, once")
        #expect(epochs.filter { $0.device == "/dev/r1" } == [complete], "the receivers kept are held as before")
        #expect(epochs.first == partial(of: "/dev/r0"), "the forgotten one's, passed on when it was forgotten")
        let reported = try await collect(asReported)
        #expect(reported.filter { $0.device == "/dev/r1" } == [partial(of: "/dev/r1"), complete], "the repeat dropped")
    }

    @Test func aLostConnectionEndsTheEpochAndTheStreamGoesOn() async throws {
        let rig = AsyncRig(reconnect: ReconnectPolicy(initialDelay: .seconds(1), maximumDelay: .seconds(1), jitter: 0))
        let updates = rig.gps.updates(delivery: .oncePerEpoch)
        var iterator = updates.makeAsyncIterator()
        await rig.source.waitForOpening()
        rig.source.send(Location.sample(second: 1))
        rig.source.send(.failed(connectionLost))
        #expect(try await iterator.next() == Location.sample(second: 1))
        // Reconnected: the stream carries on with the next epochs.
        rig.managerClock.advance(by: .seconds(1))   // the reconnection timer was set as the failure was handled
        await rig.source.waitForOpening(count: 2)
        rig.source.send(Location.sample(second: 5))
        rig.source.send(Location.sample(second: 6))
        #expect(try await iterator.next() == Location.sample(second: 5))
    }

    @Test func aGSTAfterItsTPVCompletesTheRecord() async throws {
        let rig = AsyncRig()
        let once = rig.gps.updates(delivery: .oncePerEpoch)
        let asReported = rig.gps.updates()
        await rig.source.waitForOpening()
        let fix = Location.sample(second: 1)
        let deviation = Location.Deviation(latitude: 0.8, longitude: 0.6, altitude: 1.9)
        rig.source.send(fix)
        // gpsd's GST of the same epoch (its time, its device) comes after the TPV.
        rig.source.send(.report(.deviation(deviation, device: fix.device, time: fix.timestamp)))
        // A GST of another epoch completes nothing.
        rig.source.send(.report(.deviation(deviation, device: fix.device, time: Date(timeIntervalSince1970: 0))))
        rig.source.send(.finished)
        var completed = fix
        completed.deviation = deviation
        #expect(try await collect(once) == [completed])
        #expect(try await collect(asReported) == [fix, completed])
    }

    @Test func aGSTBeforeItsTPVIsAttachedToIt() async throws {
        let rig = AsyncRig()
        let updates = rig.gps.updates()
        await rig.source.waitForOpening()
        let fix = Location.sample(second: 1)
        let deviation = Location.Deviation(latitude: 0.5, longitude: 0.4, altitude: nil)
        rig.source.send(.report(.deviation(deviation, device: fix.device, time: fix.timestamp)))
        rig.source.send(fix)
        rig.source.send(Location.sample(second: 2))   // no GST for this epoch: none attached
        rig.source.send(.finished)
        var completed = fix
        completed.deviation = deviation
        #expect(try await collect(updates) == [completed, Location.sample(second: 2)])
    }

    @Test func filtersJudgeTheCompleteRecord() async throws {
        let rig = AsyncRig()
        // Only fixes of 5 m or better: the epoch's first report lacks the accuracy, its complete record has it.
        let updates = rig.gps.updates(desiredAccuracy: 5, delivery: .oncePerEpoch)
        await rig.source.waitForOpening()
        var first = Location.sample(second: 1)
        first.horizontalAccuracy = nil
        rig.source.send(first)
        rig.source.send(Location.sample(second: 1))
        rig.source.send(Location.sample(second: 2, accuracy: 50))   // epoch 2: too coarse
        rig.source.send(.finished)
        #expect(try await collect(updates) == [Location.sample(second: 1)])
    }
}

extension EpochDeliveryTests {
    /// `sample(second:)` of another receiver.
    private func other(_ second: Int) -> Location {
        var fix = Location.sample(second: second, device: "/dev/other")
        fix.coordinate.latitude = 1
        return fix
    }

    @Test func twoReceiversInterleavedAreHeldApart() async throws {
        let rig = AsyncRig()
        let once = rig.gps.updates(delivery: .oncePerEpoch)
        await rig.source.waitForOpening()
        for second in 1...3 {
            // Each receiver's epoch comes in two reports, the two receivers' reports interleaved.
            rig.source.send(partial(second))
            rig.source.send(other(second))
            rig.source.send(Location.sample(second: second))
        }
        rig.source.send(.finished)
        let fixes = try await collect(once)
        #expect(fixes.filter { $0.device == "/dev/test" } == (1...3).map { Location.sample(second: $0) })
        #expect(fixes.filter { $0.device == "/dev/other" } == (1...3).map { other($0) })
    }

    @Test func oneReceiverLosingItsFixEndsOnlyItsEpoch() async throws {
        let rig = AsyncRig()
        let updates = rig.gps.updates(delivery: .oncePerEpoch)
        var iterator = updates.makeAsyncIterator()
        await rig.source.waitForOpening()
        rig.source.send(other(1))
        rig.source.send(Location.sample(second: 1))
        rig.source.send(.report(.noFix(device: "/dev/test", time: nil)))
        #expect(try await iterator.next() == Location.sample(second: 1))
        rig.source.send(.finished)
        #expect(try await iterator.next() == other(1))   // held until the end, not flushed by the other's loss
        #expect(try await iterator.next() == nil)
    }

    @Test func aGSTAfterTheEpochWasPassedOnIsNotPassedOnAgain() async throws {
        let rig = AsyncRig()
        let once = rig.gps.updates(delivery: .oncePerEpoch)
        let asReported = rig.gps.updates()
        await rig.source.waitForOpening()
        let fix = Location.sample(second: 1)
        let deviation = Location.Deviation(latitude: 0.8, longitude: 0.6, altitude: 1.9)
        rig.source.send(fix)
        rig.source.send(.report(.noFix(device: fix.device, time: nil)))   // epoch 1 passed on
        rig.source.send(.report(.deviation(deviation, device: fix.device, time: fix.timestamp)))
        rig.source.send(Location.sample(second: 2))
        rig.source.send(.finished)
        var completed = fix
        completed.deviation = deviation
        #expect(try await collect(once) == [fix, Location.sample(second: 2)])
        #expect(try await collect(asReported) == [fix, completed, Location.sample(second: 2)])
    }

    @Test func aGSTCompletesItsOwnReceiversFixWhenAnotherReportedInBetween() async throws {
        let rig = AsyncRig()
        let updates = rig.gps.updates()
        await rig.source.waitForOpening()
        let fix = Location.sample(second: 1)
        let deviation = Location.Deviation(latitude: 0.8, longitude: 0.6, altitude: 1.9)
        rig.source.send(fix)
        rig.source.send(other(1))
        rig.source.send(.report(.deviation(deviation, device: fix.device, time: fix.timestamp)))
        rig.source.send(.finished)
        var completed = fix
        completed.deviation = deviation
        #expect(try await collect(updates) == [fix, other(1), completed])
    }
}

extension EpochDeliveryTests {
    @Test func stopPassesTheOpenEpochOnThenEndsTheStream() async throws {
        let rig = AsyncRig()
        let once = rig.gps.updates(delivery: .oncePerEpoch)
        let asReported = rig.gps.updates()
        await rig.source.waitForOpening()
        rig.source.send(partial(1))
        rig.source.send(Location.sample(second: 1))
        rig.source.send(partial(2))
        await rig.gps.stop()
        // Epoch 1 was over; epoch 2 was open: stop() passes it on, as the most complete record it will have.
        #expect(try await collect(once) == [Location.sample(second: 1), partial(2)])
        #expect(try await collect(asReported) == [partial(1), Location.sample(second: 1), partial(2)])
        #expect(rig.gps.manager.subscriptionCount == 0)
        #expect(!rig.source.isRunning)
    }

    @Test func endingSubscriptionsNumbersTheHeldEpochAndTheEndAfterEverythingDecidedBefore() async throws {
        let rig = AsyncRig()
        let recorder = NoticeRecorder()
        let id = rig.gps.manager.reserveSubscription()
        #expect(rig.gps.manager.subscribe(id, .continuous(delivery: .oncePerEpoch), consumer: recorder))
        await rig.source.waitForOpening()
        rig.source.send(partial(1))
        rig.source.send(Location.sample(second: 1))
        rig.source.send(partial(2))
        rig.gps.manager.endSubscriptions([id])
        // Numbered in the order decided, so a consumer that gets the end first (on stop()'s thread) can wait
        // for the fix still on its way from the session's thread.
        #expect(recorder.notices == [
            SubscriptionNotice(id: id, event: .location(Location.sample(second: 1))),
            SubscriptionNotice(id: id, event: .location(partial(2))),
            SubscriptionNotice(id: id, event: .ended(nil)),
        ])
        #expect(rig.gps.manager.subscriptionCount == 0)
    }
}

/// A consumer that keeps every notice it is given, in the order they arrive.
private final class NoticeRecorder: SubscriptionConsumer {
    private let received = Locked<[SubscriptionNotice]>([])
    var notices: [SubscriptionNotice] { received.withLock { $0 } }
    func receive(_ notices: [SubscriptionNotice]) { received.withLock { $0 += notices } }
}

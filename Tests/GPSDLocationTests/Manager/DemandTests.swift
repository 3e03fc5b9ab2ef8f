import Foundation
import GPSDLocation
import GPSDSystem
import GPSDTestSupport
import Testing

/// The one rule of demand: the source has a session open while any consumer holds a subscription, whatever
/// kind of consumer and in whatever order they leave.
@Suite("Demand", .timeLimit(.minutes(1)))
struct DemandTests {
    /// A consumer of one of the four kinds, and how it leaves.
    private enum Consumer {
        case delegateUpdates
        case delegateRequest
        case request(Task<AsyncOutcome, Never>)
        case stream(Task<Void, Never>)
    }

    @Test(arguments: [0x5EED_0001, 0x5EED_0002, 0x5EED_0003, 0x5EED_0004] as [UInt64])
    func theSessionStaysOpenUntilTheLastOfManyMixedConsumersLeavesAndOpensAgainForTheNext(seed: UInt64) async {
        var random = SplitMix64(seed: seed)
        let rig = AsyncRig()
        let manager = rig.gps.manager
        manager.delegate = DelegateRecorder()
        for round in 0..<25 {
            let opensBefore = rig.source.openCount
            var consumers: [Consumer] = []
            var requests = 0
            // At most one of the delegate's two: stopUpdatingLocation() ends both.
            switch Int.random(in: 0..<3, using: &random) {
            case 0: consumers.append(.delegateUpdates); manager.startUpdatingLocation()
            case 1: consumers.append(.delegateRequest); manager.requestLocation()
            default: break
            }
            for _ in 0..<Int.random(in: 1...8, using: &random) {
                if Bool.random(using: &random) {
                    consumers.append(.request(rig.request(timeout: .seconds(60))))
                    requests += 1
                } else {
                    let stream = rig.gps.updates()   // subscribed when it returns
                    consumers.append(.stream(Task { do { for try await _ in stream {} } catch {} }))
                }
            }
            await rig.clock.waitForSleepers(requests)   // every request has subscribed
            // The last round's session may still be closing: a cancelled stream gives its subscription back on a
            // thread of its own. The session opens once that is done.
            await rig.source.waitForOpening(count: opensBefore + 1)
            #expect(rig.source.openCount == opensBefore + 1, "round \(round): one session for all")
            #expect(rig.source.isRunning)

            consumers.shuffle(using: &random)
            for (index, consumer) in consumers.enumerated() {
                await leave(consumer, rig: rig)
                if index < consumers.count - 1 {
                    #expect(rig.source.isRunning, "round \(round): \(consumers.count - index - 1) consumers remain")
                    #expect(rig.source.openCount == opensBefore + 1)
                }
            }
            await rig.source.waitUntilIdle()
            #expect(!rig.source.isRunning, "round \(round): the last consumer left")
            #expect(rig.source.closeCount == rig.source.openCount)
        }
    }

    private func leave(_ consumer: Consumer, rig: AsyncRig) async {
        switch consumer {
        case .delegateUpdates: rig.gps.manager.stopUpdatingLocation()
        case .delegateRequest: rig.managerClock.advance(by: rig.gps.manager.requestTimeout)
        case .request(let task):
            task.cancel()
            #expect(await task.value == .cancelled)
        case .stream(let task):
            task.cancel()
            await task.value
        }
    }
}

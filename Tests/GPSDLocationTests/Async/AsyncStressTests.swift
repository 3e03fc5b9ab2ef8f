import Foundation
import GPSDLocation
import GPSDSystem
import GPSDTestSupport
import Testing

/// Many requests under random interleavings of fixes, failures, timeouts, cancellations and `stop()`, from a
/// fixed seed so a failure reproduces. Every request must complete exactly once (a double resume crashes the
/// process), with an outcome the order of events allows, and no watch may be left running.
@Suite("Async stress", .timeLimit(.minutes(2)))
struct AsyncStressTests {
    private static let seed: UInt64 = 0x6770_7364_6173_796E
    private static let connectionLost = LocationError(.connectionLost, "connection to gpsd at localhost:2947 lost")

    // MARK: Modelled interleavings

    /// One event, driven from the test's task.
    private enum Step: CustomStringConvertible {
        case fix(Location)
        case advance(Duration)
        case cancel(Int)
        case fail
        case finish
        case stop
        case cancelAll

        var description: String {
            switch self {
            case .fix(let location): "fix(\(location.shortDescription))"
            case .advance(let duration): "advance(\(duration))"
            case .cancel(let index): "cancel(\(index))"
            case .fail: "fail"
            case .finish: "finish"
            case .stop: "stop"
            case .cancelAll: "cancelAll"
            }
        }
    }

    private struct Spec {
        var desiredAccuracy: Double?
        var deadline: Duration
    }

    /// Requests go in batches. Each batch registers (observed as one timeout sleeping per request) and so
    /// holds one watch, then a random script of steps runs on the test's task, each step synchronous except a
    /// timeout, which runs on its timer's task some time after the clock passed it. So the outcome of each
    /// request is exactly known, except that a timeout may lose to a step that came after it:
    /// the first step that ends a request wins; if the clock passed its deadline before, the timeout may win
    /// instead, carrying the best fix the timer saw by then; or, once its timer has given the subscription back,
    /// a later cancel or stop may.
    @Test func randomInterleavingsResumeEveryRequestOnceWithTheOutcomeTheirOrderAllows() async {
        var random = SplitMix64(seed: Self.seed)
        var rig = AsyncRig()
        var tally = AsyncTally()
        var mismatches: [String] = []
        var second = 0
        var batches = 0

        while tally.requests < 10_000 {
            batches += 1
            let base = rig.clock.now.offset
            let specs = (0..<Int.random(in: 40...120, using: &random)).map { _ in
                Spec(desiredAccuracy: Bool.random(using: &random) ? nil : 10,
                     deadline: base + .milliseconds(500 * Int.random(in: 1...16, using: &random)))
            }
            let startsBefore = rig.source.openCount
            let requests = specs.map { rig.request(timeout: $0.deadline - base, desiredAccuracy: $0.desiredAccuracy) }
            await rig.clock.waitForSleepers(specs.count)
            await rig.source.waitForOpening(count: startsBefore + 1)   // the last batch's session may be closing
            #expect(rig.source.openCount == startsBefore + 1, "batch \(batches) shares one watch")

            // Requests cancelled before (or just as) they register, while the others hold the watch.
            for _ in 0..<Int.random(in: 0...4, using: &random) {
                let request = rig.request(timeout: .seconds(1))
                request.cancel()
                let outcome = await request.value
                tally.count(outcome)
                if outcome != .cancelled { mismatches.append("batch \(batches) early cancel: \(outcome)") }
            }
            #expect(rig.clock.sleeperCount == specs.count)

            var steps: [Step] = []
            for _ in 0..<Int.random(in: 4...24, using: &random) {
                steps.append(Self.randomStep(requests: specs.count, second: &second, using: &random))
            }
            steps.append(Bool.random(using: &random) ? .advance(.seconds(60)) : .cancelAll)
            for step in steps { await Self.perform(step, rig: rig, requests: requests) }

            for (index, request) in requests.enumerated() {
                let outcome = await request.value
                tally.count(outcome)
                if !Self.allows(outcome, spec: specs[index], request: index, steps: steps, base: base) {
                    mismatches.append("batch \(batches) request \(index): \(outcome); steps \(steps)")
                }
            }
            #expect(rig.clock.sleeperCount == 0)
            // Every request ended inside a step and gave the watch back there; the session is closed on a thread
            // of its own (a cancellation handler must not block), and a timeout's on its timer's task after
            // resuming its caller: wait for that. A watch left held would hang here, past the time limit.
            await rig.source.waitUntilIdle()
            // A stop is final for its AsyncLocationManager: the next batch asks through a new one, same manager.
            if steps.contains(where: { if case .stop = $0 { true } else { false } }) { rig = rig.renewed() }
        }

        #expect(mismatches.isEmpty, "\(mismatches.count) outcomes their order does not allow: \(mismatches.prefix(5))")
        #expect(tally.completions == tally.requests)
        #expect(tally.requests >= 10_000)
        #expect(tally.unexpected == 0)
        // The seed exercises every way a request can end.
        #expect(
            tally.fixes > 0 && tally.timeouts > 0 && tally.failures > 0 && tally.ends > 0 && tally.cancellations > 0,
            "\(tally)")
        await rig.expectNoWatchHeld(second: &second)
    }

    private static func randomStep(requests: Int, second: inout Int, using random: inout SplitMix64) -> Step {
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<36:
            second += 1
            let accuracy = ([3, 8, 10, 12, 25, 60, nil] as [Double?]).randomElement(using: &random)!
            return .fix(.sample(second: second, accuracy: accuracy))
        case 36..<62: return .advance(.milliseconds(250 * Int.random(in: 1...12, using: &random)))
        case 62..<90: return .cancel(Int.random(in: 0..<requests, using: &random))
        case 90..<93: return .fail
        case 93..<96: return .finish
        default: return .stop
        }
    }

    private static func perform(_ step: Step, rig: AsyncRig, requests: [Task<AsyncOutcome, Never>]) async {
        switch step {
        case .fix(let location): rig.source.send(location)
        case .advance(let duration): rig.clock.advance(by: duration)
        case .cancel(let index): requests[index].cancel()
        case .fail: rig.source.send(.failed(connectionLost))
        case .finish: rig.source.send(.finished)
        case .stop: await rig.gps.stop()
        case .cancelAll: requests.forEach { $0.cancel() }
        }
    }

    /// Whether the order of `steps` allows `outcome` for request `index`.
    private static func allows(
        _ outcome: AsyncOutcome, spec: Spec, request index: Int, steps: [Step], base: Duration
    ) -> Bool {
        enum Ending { case fix(Location), cancelled, failed, ended(best: Location?) }
        var now = base
        var best: Location?
        // bestBefore[i]: the best of the fixes of steps[..<i] that do not meet the accuracy.
        var bestBefore: [Location?] = []
        var timeoutStep: Int?
        var ending: (step: Int, ending: Ending)?
        for (i, step) in steps.enumerated() {
            bestBefore.append(best)
            switch step {
            case .advance(let duration):
                now += duration
                if timeoutStep == nil, now >= spec.deadline { timeoutStep = i }
            case .fix(let location):
                if meets(location, spec.desiredAccuracy) {
                    ending = (i, .fix(location))
                } else if isBetter(location, than: best) {
                    best = location
                }
            case .cancel(index), .cancelAll, .stop: ending = (i, .cancelled)
            case .cancel: break
            case .fail: ending = (i, .failed)
            case .finish: ending = (i, .ended(best: best))
            }
            if ending != nil { break }
        }
        if ending == nil { bestBefore.append(best) }

        if let ending {
            switch (ending.ending, outcome) {
            case (.fix(let expected), .fix(let location)) where location == expected: return true
            case (.cancelled, .cancelled): return true
            case (.failed, .error(let error)) where error == connectionLost: return true
            case (.ended(let expected), .error(let error))
                where error.code == .locationUnknown && error.bestLocation == expected: return true
            default: break
            }
        }
        // A timeout gives the subscription back (fixes stop reaching the request) before it takes the request:
        // a cancel or stop that comes in between takes it instead.
        if outcome == .cancelled, let timeoutStep {
            return steps[(timeoutStep + 1)...].contains { step in
                switch step {
                case .cancel(index), .cancelAll, .stop: true
                default: false
                }
            }
        }
        // A timeout that came first may win; its timer ran after that step, before the ending one.
        guard let timeoutStep, let error = outcome.locationError, error.code == .timedOut else { return false }
        let last = ending?.step ?? steps.count
        return (timeoutStep + 1...last).contains { bestBefore[$0] == error.bestLocation }
    }

    static func meets(_ location: Location, _ accuracy: Double?) -> Bool {
        guard let accuracy else { return true }
        return location.horizontalAccuracy.map { $0 <= accuracy } ?? false
    }

    /// The bridge's documented rule: the more accurate; a known accuracy beats an unknown one; ties go to the
    /// newer.
    private static func isBetter(_ location: Location, than best: Location?) -> Bool {
        guard let best else { return true }
        switch (location.horizontalAccuracy, best.horizontalAccuracy) {
        case let (new?, old?): return new <= old
        case (.some, nil): return true
        case (nil, .some): return false
        case (nil, nil): return true
        }
    }
}

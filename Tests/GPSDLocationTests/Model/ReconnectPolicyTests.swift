import GPSDLocation
import Testing

/// ``ReconnectPolicy``: the delay before each retry, a pure function of the number of failures and the jitter.
@Suite("ReconnectPolicy")
struct ReconnectPolicyTests {
    @Test func theDefaultDoublesFromAQuarterSecondToEightSeconds() {
        let policy = ReconnectPolicy.default
        let middle = (1...9).map { policy.delay(afterFailures: $0, unit: 0.5) }   // the middle of the jitter: none
        #expect(middle == [.milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2), .seconds(4),
                           .seconds(8), .seconds(8), .seconds(8), .seconds(8)])
        #expect(policy.allowsRetry(afterFailures: 1_000_000), "without end")
    }

    @Test func jitterVariesEachDelayByAFifthEitherWay() {
        let policy = ReconnectPolicy.default
        #expect(policy.delay(afterFailures: 3, unit: 0) == .milliseconds(800))
        #expect(policy.delay(afterFailures: 3, unit: 1) == .milliseconds(1200))
        #expect(policy.delay(afterFailures: 7, unit: 1) == .milliseconds(9600), "the cap, plus its jitter")
        for unit in stride(from: 0.0, through: 1, by: 0.125) {
            let delay = policy.delay(afterFailures: 2, unit: unit)
            #expect(delay >= .milliseconds(400) && delay <= .milliseconds(600))
        }
    }

    @Test func aCustomPolicyAndItsLimit() {
        let policy = ReconnectPolicy(initialDelay: .seconds(1), multiplier: 3, maximumDelay: .seconds(20), jitter: 0,
                                     maximumRetries: 4)
        #expect((1...5).map { policy.delay(afterFailures: $0, unit: 0.9) }
                == [.seconds(1), .seconds(3), .seconds(9), .seconds(20), .seconds(20)])
        #expect(policy.allowsRetry(afterFailures: 4))
        #expect(!policy.allowsRetry(afterFailures: 5))
    }

    @Test func neverRetries() {
        #expect(!ReconnectPolicy.never.allowsRetry(afterFailures: 1))
    }
}

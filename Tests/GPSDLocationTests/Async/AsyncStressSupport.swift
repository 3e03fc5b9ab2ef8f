import Foundation
import GPSDLocation
import GPSDTestSupport
import Testing

extension AsyncRig {
    /// Proves the manager holds no subscription: one more request opens a session (so nothing kept the old
    /// one), is served, and once it is gone the session is closed.
    func expectNoWatchHeld(second: inout Int) async {
        await source.waitUntilIdle()
        let opensBefore = source.openCount
        let probe = request(timeout: .seconds(1))
        await clock.waitForSleepers(1)
        // The old session may still be closing when the probe subscribes: the thread that closes it opens the
        // new one, perhaps after the probe's timer started.
        await source.waitForOpening(count: opensBefore + 1)
        #expect(source.openCount == opensBefore + 1, "a new session opened: nothing held the old one")
        second += 1
        let fix = Location.sample(second: second)
        #expect(source.send(fix))
        clock.advance(by: .seconds(1))  // ends the probe even if the fix did not reach it
        #expect(await probe.value == .fix(fix))
        await source.waitUntilIdle()
        #expect(!source.isRunning)
    }
}

/// Counts of how requests ended.
struct AsyncTally: CustomStringConvertible {
    var requests = 0
    var fixes = 0
    var timeouts = 0
    var failures = 0
    var ends = 0
    var cancellations = 0
    var unexpected = 0

    var completions: Int { fixes + timeouts + failures + ends + cancellations + unexpected }

    mutating func count(_ outcome: AsyncOutcome) {
        requests += 1
        switch outcome {
        case .fix: fixes += 1
        case .error(let error) where error.code == .timedOut: timeouts += 1
        case .error(let error) where error.code == .locationUnknown: ends += 1
        case .error: failures += 1
        case .cancelled: cancellations += 1
        case .unexpected: unexpected += 1
        }
    }

    var description: String {
        "\(requests) requests: \(fixes) fixes, \(timeouts) timeouts, \(failures) failures, \(ends) ended, "
            + "\(cancellations) cancelled, \(unexpected) unexpected"
    }
}


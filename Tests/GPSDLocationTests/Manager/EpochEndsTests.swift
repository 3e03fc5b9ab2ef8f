import Foundation
@testable import GPSDLocation
import Testing

/// When a receiver's epoch is complete, from the number of reports its epochs bring, as a value: each report, and
/// whether it completes its epoch.
@Suite("Epoch ends as a value")
struct EpochEndsTests {
    private static func time(_ second: Int) -> Date { Date(timeIntervalSince1970: 1_748_779_200 + Double(second)) }

    /// Feeds `counts[i]` reports of epoch `i`; returns, for each report, whether it completed its epoch.
    private static func feed(_ ends: inout EpochEnds, _ counts: [Int], device: String? = "/dev/a", from first: Int = 0) -> [[Bool]] {
        counts.enumerated().map { epoch, count in
            (0..<count).map { _ in ends.report(device: device, time: time(first + epoch)) }
        }
    }

    @Test func twoAlikeEpochsTeachTheCountAndTheThirdCompletesAtIt() {
        var ends = EpochEnds()
        #expect(Self.feed(&ends, [3, 3, 3, 3]) == [
            [false, false, false], [false, false, false], [false, false, true], [false, false, true],
        ])
    }

    @Test func aReportBeyondTheCountCompletesNothingMoreAndUnlearnsIt() {
        var ends = EpochEnds()
        // Epoch 2 brings a fourth report after it was judged complete; epochs 3 and 4 differ from 2, so nothing is
        // judged until two alike (4 and 5) have been seen again.
        #expect(Self.feed(&ends, [3, 3, 4, 3, 3, 3]) == [
            [false, false, false], [false, false, false], [false, false, true, false], [false, false, false],
            [false, false, false], [false, false, true],
        ])
    }

    @Test func epochsThatDifferAreNeverJudged() {
        var ends = EpochEnds()
        #expect(Self.feed(&ends, [2, 3, 2, 3, 2]).joined().allSatisfy { !$0 })
    }

    @Test func aTimeThatStepsBackStartsOver() {
        var ends = EpochEnds()
        _ = Self.feed(&ends, [2, 2], from: 10)
        // A receiver's clock reset: epoch 5 after 11. What was learned goes; two alike epochs teach it again.
        #expect(Self.feed(&ends, [2, 2, 2], from: 5) == [[false, false], [false, false], [false, true]])
    }

    @Test func receiversAreKeptApart() {
        var ends = EpochEnds()
        _ = Self.feed(&ends, [2, 2], device: "/dev/a")
        _ = Self.feed(&ends, [3, 3], device: "/dev/b")
        #expect(Self.feed(&ends, [2], device: "/dev/a", from: 2) == [[false, true]])
        #expect(Self.feed(&ends, [3], device: "/dev/b", from: 2) == [[false, false, true]])
    }

    @Test func forgettingAReceiverForgetsWhatItTaught() {
        var ends = EpochEnds()
        _ = Self.feed(&ends, [2, 2], device: "/dev/a")
        ends.forget("/dev/a")
        #expect(Self.feed(&ends, [2, 2, 2], device: "/dev/a", from: 2) == [[false, false], [false, false], [false, true]])
    }
}

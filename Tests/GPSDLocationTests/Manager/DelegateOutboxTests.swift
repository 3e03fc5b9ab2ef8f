import Foundation
@testable import GPSDLocation
import GPSDTestSupport
import Testing

/// The delegate's outbox as a value: from a live gpsd, a fix decided while a `didUpdateLocations` call waits joins
/// it (past headings and views, not past a status change, a failure or a rejection, nor into another generation's),
/// what waits is bounded per kind as a stream's default buffer is, and a replay's outbox keeps every call.
@Suite("Delegate outbox")
struct DelegateOutboxTests {
    private typealias Call = DelegateCall

    @Test func fixesDecidedWhileACallWaitsJoinIt() {
        var outbox = DelegateOutbox(bound: .default)
        let fixes = (1...3).map { Location.sample(second: $0) }
        let waiting = fixes.map { fix in
            #expect(outbox.add([Call(kind: .locations([fix]), generation: 0)], at: .zero) == 0)
            return outbox.count
        }
        #expect(waiting == [1, 1, 1], "one call to make; the others joined it")
        #expect(Self.describe(outbox.popFirst()) == "fixes 1 2 3")
        // Once made, the next fix starts a call of its own.
        _ = outbox.add([Call(kind: .locations([Location.sample(second: 4)]), generation: 0)], at: .zero)
        #expect(outbox.count == 1)
        #expect(Self.describe(outbox.popFirst()) == "fixes 4")
    }

    @Test func aFixJoinsPastHeadingsAndViewsButNotPastAStatusAFailureOrARejection() {
        var outbox = DelegateOutbox(bound: .default)
        let calls: [Call] = [
            Call(kind: .locations([.sample(second: 1)]), generation: 0),
            Call(kind: .heading(Heading(trueHeading: 10)), generation: 0),
            Call(kind: .satellites(SkyView(satellites: [], device: "/dev/test")), generation: 0),
            Call(kind: .locations([.sample(second: 2)]), generation: 0),   // joins the first
            Call(kind: .status(.fixLost), generation: 0),
            Call(kind: .locations([.sample(second: 3)]), generation: 0),   // a call of its own
            Call(kind: .failure(LocationError(.connectionLost, "gone")), generation: 0),
            Call(kind: .locations([.sample(second: 4)]), generation: 0),   // a call of its own
            Call(kind: .rejection(FixRejection(desiredAccuracy: 5, best: .sample(second: 4), duration: .seconds(5))), generation: 0),
            Call(kind: .locations([.sample(second: 5)]), generation: 0),   // a call of its own
            Call(kind: .locations([.sample(second: 6)]), generation: 1),   // another generation's
        ]
        #expect(outbox.add(calls, at: .zero) == 0)
        #expect(outbox.count == 10, "all but the second fix wait as calls of their own")
        var made: [String] = []
        while let call = outbox.popFirst() { made.append(Self.describe(call)) }
        #expect(made == [
            "fixes 1 2", "heading", "view", "status", "fixes 3", "failure", "fixes 4", "rejection", "fixes 5", "fixes 6",
        ])
    }

    /// A delegate stuck for 10 s at 10 Hz: one call waits, with the fixes of the last 2 s, the newest last.
    @Test func aBacklogOfFixesIsBoundedAndEndsWithTheNewest() {
        var outbox = DelegateOutbox(bound: .default)
        var dropped = 0
        for tenth in 1...100 {
            let call = Call(kind: .locations([.sample(second: tenth)]), generation: 0)
            dropped += outbox.add([call], at: .milliseconds(100 * tenth))
            #expect(outbox.count == 1)
        }
        // Decided at 8.0 s to 10.0 s, ends included.
        #expect(Self.describe(outbox.popFirst()) == "fixes " + (80...100).map(String.init).joined(separator: " "))
        #expect(dropped == 79)
    }

    @Test func theBoundCountsTheFixesOfEveryCallThatWaits() {
        var outbox = DelegateOutbox(bound: .default)
        var dropped = 0
        // Two calls kept apart by a status change, 30 fixes at once: the newest 16 are kept, across both, once 3 s
        // have passed.
        for second in 1...10 { dropped += outbox.add([Call(kind: .locations([.sample(second: second)]), generation: 0)], at: .zero) }
        _ = outbox.add([Call(kind: .status(.fixLost), generation: 0)], at: .zero)
        for second in 11...30 { dropped += outbox.add([Call(kind: .locations([.sample(second: second)]), generation: 0)], at: .zero) }
        #expect(dropped == 0 && outbox.count == 3, "nothing has waited 2 s yet")
        dropped += outbox.add([Call(kind: .locations([.sample(second: 31)]), generation: 0)], at: .seconds(3))
        #expect(dropped == 15)
        // The first call was left with none: it is not made.
        #expect(outbox.count == 2)
        #expect(Self.describe(outbox.popFirst()) == "status")
        #expect(Self.describe(outbox.popFirst()) == "fixes " + (16...31).map(String.init).joined(separator: " "))
    }

    @Test func headingsAndViewsWaitingAreBoundedAsFixesAre() {
        var outbox = DelegateOutbox(bound: .default)
        var dropped = 0
        for tenth in 1...100 {
            dropped += outbox.add([Call(kind: .heading(Heading(trueHeading: Double(tenth))), generation: 0)],
                                  at: .milliseconds(100 * tenth))
        }
        #expect(outbox.count == 21 && dropped == 79)
        #expect(Self.describe(outbox.popFirst()) == "heading")
    }

    @Test func statusChangesFailuresAndRejectionsAreNeverDropped() {
        var outbox = DelegateOutbox(bound: .default)
        for second in 1...100 {
            _ = outbox.add([Call(kind: .status(.stale(silentFor: .seconds(second))), generation: 0)], at: .seconds(second))
        }
        #expect(outbox.count == 100)
    }

    @Test func aReplaysOutboxKeepsEveryCallAsDecided() {
        var outbox = DelegateOutbox(bound: nil)
        for second in 1...100 {
            #expect(outbox.add([Call(kind: .locations([.sample(second: second)]), generation: 0)], at: .seconds(second)) == 0)
            #expect(outbox.count == second)
        }
        #expect(outbox.count == 100)
        #expect(Self.describe(outbox.popFirst()) == "fixes 1")
    }

    /// A call as the delegate would be told it: fixes by their second, the other kinds by name.
    private static func describe(_ call: Call?) -> String {
        switch call?.kind {
        case .locations(let fixes)?:
            "fixes " + fixes.map { String(Int($0.timestamp.timeIntervalSince1970) - 1_748_779_200) }.joined(separator: " ")
        case .heading?: "heading"
        case .satellites?: "view"
        case .status?: "status"
        case .failure?: "failure"
        case .rejection?: "rejection"
        case nil: "none"
        }
    }
}

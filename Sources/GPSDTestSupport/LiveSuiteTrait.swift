public import Testing

/// A suite trait: the suite's tests run while no other suite with this trait runs, anywhere in the test process.
///
/// Live suites need the machine to keep up in real time: every gpsfake run starts a gpsd that reads its log as
/// the clock goes, and gpsfake busy-waits a core after the log ends; the soak drives the live path flat out.
/// `swift test` runs suites in parallel, and on two cores several live suites at once starve each other (a fix
/// read half a second late, a shell in tmux that answers after a minute). So suites that run gpsfake, child
/// processes that read a real gpsd, or the soak carry `.liveSuite` (and `.serialized`, so that their own tests
/// run one at a time): they take turns, beside the deterministic suites.
///
/// The wait is the suite's, outside its tests: a test's time limit counts from when it starts, so a suite
/// waiting for its turn cannot push its tests over their limits.
public struct LiveSuiteTrait: SuiteTrait, TestScoping {
    public var isRecursive: Bool { false }

    /// The scope is the suite's alone (`testCase` is `nil` for a suite), never a test case's.
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        test.isSuite && testCase == nil ? self : nil
    }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        await LiveSuiteTurns.shared.wait()
        do {
            try await function()
        } catch {
            await LiveSuiteTurns.shared.pass()
            throw error
        }
        await LiveSuiteTurns.shared.pass()
    }
}

extension Trait where Self == LiveSuiteTrait {
    /// Runs the suite while no other `.liveSuite` suite runs in this process.
    public static var liveSuite: Self { LiveSuiteTrait() }
}

/// Whose turn it is among the live suites: one at a time, in the order they asked.
actor LiveSuiteTurns {
    static let shared = LiveSuiteTurns()

    private var taken = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// Returns when it is the caller's turn.
    func wait() async {
        guard taken else {
            taken = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    /// How many suites wait for their turn (for tests).
    var waitingCount: Int { waiting.count }

    /// Ends the caller's turn: the next waiting suite's starts (the turn passes on, still taken).
    func pass() {
        if waiting.isEmpty {
            taken = false
        } else {
            waiting.removeFirst().resume()
        }
    }
}

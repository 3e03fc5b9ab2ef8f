import GPSDSystem
@testable import GPSDTestSupport
import Testing

/// The turns `.liveSuite` suites take: one at a time, in the order they asked, and free again after the last.
/// A turn that is never passed on, or never freed, leaves a wait unended: the time limit makes that a failure.
@Suite("Live suites' turns", .timeLimit(.minutes(1)))
struct LiveSuiteTurnsTests {
    @Test("a suite waits while another has the turn; turns pass in the order asked; the last pass frees it")
    func oneAtATimeInOrder() async {
        let turns = LiveSuiteTurns()
        let order = Locked<[String]>([])
        await turns.wait()   // the first suite's turn, taken at once

        let second = Task {
            await turns.wait()
            order.withLock { $0.append("second") }
            await turns.pass()
        }
        // Until it waits, or (were the turn not held) has run.
        while await turns.waitingCount < 1, order.withLock({ $0.isEmpty }) { await Task.yield() }
        let third = Task {
            await turns.wait()
            order.withLock { $0.append("third") }
            await turns.pass()
        }
        while await turns.waitingCount < 2, order.withLock({ $0.isEmpty }) { await Task.yield() }

        #expect(order.withLock { $0 }.isEmpty, "nobody else's turn while the first has it")
        order.withLock { $0.append("first") }
        await turns.pass()
        await second.value
        await third.value
        #expect(order.withLock { $0 } == ["first", "second", "third"])

        // Free again: the next suite's turn comes at once.
        await turns.wait()
        #expect(await turns.waitingCount == 0)
        await turns.pass()
    }
}

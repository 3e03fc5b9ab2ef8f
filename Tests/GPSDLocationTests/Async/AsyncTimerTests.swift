import GPSDLocation
import GPSDTestSupport
import Testing

/// A request's timer, at the moment it starts.
@Suite("Async request timers", .timeLimit(.minutes(1)))
struct AsyncTimerTests {
    /// The fix arrives just as the request's timer starts sleeping, before the requesting thread could have
    /// attached the timer had it done so after starting it: the fix must still find the timer and cancel it.
    @Test func aFixAsTheTimerStartsSleepingCancelsTheTimer() async {
        for round in 0..<200 {
            let rig = AsyncRig()
            let fix = Location.sample(second: round)
            let (leftSleeping, report) = AsyncStream.makeStream(of: Int.self)
            rig.clock.onNextSleep {
                rig.source.send(fix)
                report.yield(rig.clock.sleeperCount)   // at once: the fix itself must have cancelled the timer
            }
            let request = rig.request(timeout: .seconds(5))
            #expect(await request.value == .fix(fix))
            var counts = leftSleeping.makeAsyncIterator()
            #expect(await counts.next() == 0, "round \(round): the fix left the timer sleeping")
        }
    }
}

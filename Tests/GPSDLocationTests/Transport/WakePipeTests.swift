@testable import GPSDCore
import GPSDLocation
import Testing

/// ``WakePipe``: the wait a reader thread blocks in, and its timeouts.
@Suite("WakePipe")
struct WakePipeTests {
    @Test func durationsMeaningNeverDoNotTrap() throws {
        SystemManagerClock().schedule(after: .seconds(Int64.max)) {}
        let pipe = try WakePipe()
        pipe.signal()
        #expect(try pipe.wait(for: nil, timeout: .seconds(Int64.max)) == false, "woken by the signal, not timed out")
    }

    @Test func aSignalWakesAWaitAndIsConsumed() throws {
        let pipe = try WakePipe()
        pipe.signal()
        pipe.signal()
        #expect(try pipe.wait(for: nil, timeout: .seconds(10)) == false)
        // Both signals were drained: the next wait times out (at once, for a zero timeout).
        #expect(try pipe.wait(for: nil, timeout: .zero) == false)
    }

    @Test(arguments: [
        (Duration.zero, Int32(0)), (.nanoseconds(1), 1), (.milliseconds(1), 1), (.microseconds(1500), 2),
        (.seconds(2), 2000), (.seconds(-1), 0), (.seconds(Int64(Int32.max / 1000)), -1), (.seconds(Int64.max), -1),
    ])
    func timeoutsRoundUpToTheMillisecondAndLongOnesWaitWithoutLimit(duration: Duration, milliseconds: Int32) {
        #expect(WakePipe.milliseconds(duration) == milliseconds)
    }
}

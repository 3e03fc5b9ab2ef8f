import Glibc
import GPSDLocation
import GPSDSystem
import Testing

/// ``WakePipe``: the wait a reader thread (and the fleet's uplink, and whereami's screen) blocks in, and its timeouts.
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
        #expect(Syscall.pollTimeout(duration) == milliseconds)
    }

    @Test func pollSaysWhatADescriptorIsReadyFor() throws {
        let wake = try WakePipe()
        let other = try Syscall.pipe()
        defer { Syscall.close(other.readEnd); Syscall.close(other.writeEnd) }
        // An empty pipe's write end takes bytes: ready for writing, not for reading.
        let writable = try wake.poll(other.writeEnd, events: Int16(POLLOUT), timeout: .zero)
        #expect(writable == Int16(POLLOUT))
        #expect(try wake.poll(other.readEnd, events: Int16(POLLIN), timeout: .zero) == 0)
        _ = try Syscall.write(other.writeEnd, [1])
        #expect(try wake.poll(other.readEnd, events: Int16(POLLIN), timeout: .seconds(10)) == Int16(POLLIN))
        // A signal wakes the poll without making the descriptor ready.
        wake.signal()
        #expect(try wake.poll(other.writeEnd, events: 0, timeout: .seconds(10)) == 0)
    }

    @Test func aDeadlineThatHasPassedIsATimeoutOfZeroAndNoneIsNoLimit() {
        #expect(Syscall.pollTimeout(until: .now - .seconds(1)) == 0)
        #expect(Syscall.pollTimeout(until: nil) == -1)
        let soon = Syscall.pollTimeout(until: .now + .seconds(5))
        #expect((1...5000).contains(soon), "\(soon)")
    }
}

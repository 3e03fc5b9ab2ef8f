import Dispatch
import FoundationEssentials
import GPSDLocation
import Glibc
import Synchronization

/// The fixes a consumer received, each with the `CLOCK_MONOTONIC` time it got it: what the latency benchmark of
/// `Scripts/compare-clients` compares with the feeder's time of writing the fix.
///
/// Room for every record is taken up front, so recording a fix costs a clock read, an atomic increment and two
/// stores: nothing that allocates or takes a lock on the consumer's path. A fix is known by its time, to the
/// millisecond, which the feeder makes distinct for every TPV it writes.
final class StampRecorder: @unchecked Sendable {
    // @unchecked: each slot is written once, by the call that claimed its index with the atomic increment, and
    // read only by `write(to:)` after the consumer has stopped (`Mode.Receiving.stop()` returns after it has).

    /// How many fixes make the run complete.
    let expected: Int
    private let capacity: Int
    private let keys: UnsafeMutableBufferPointer<Int64>
    private let stamps: UnsafeMutableBufferPointer<Int64>
    private let claimed = Atomic<Int>(0)
    private let complete = DispatchSemaphore(value: 0)

    /// Room for `expected` fixes and as many again (a fix received twice, or the feeder's last, uncounted one).
    init(expected: Int) {
        self.expected = expected
        capacity = 2 * expected + 16
        keys = .allocate(capacity: capacity)
        stamps = .allocate(capacity: capacity)
    }

    deinit {
        keys.deallocate()
        stamps.deallocate()
    }

    /// `CLOCK_MONOTONIC` in nanoseconds, the clock the feeder stamps with.
    static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }

    /// Records that `fix` was received at `stamp` (``now()``, taken as the consumer got it).
    func record(_ fix: Location, at stamp: Int64) {
        let index = claimed.add(1, ordering: .relaxed).oldValue
        guard index < capacity else { return }
        keys[index] = Int64((fix.timestamp.timeIntervalSince1970 * 1000).rounded())
        stamps[index] = stamp
        if index + 1 == expected { complete.signal() }
    }

    /// Ends the wait of ``waitUntilComplete()`` without all fixes: the run was cut short.
    func giveUp() { complete.signal() }

    /// Blocks the calling thread (never a task's) until ``expected`` fixes are recorded or ``giveUp()`` is called.
    func waitUntilComplete() { complete.wait() }

    /// Writes one line per fix received, `time-in-ms stamp-in-ns`, in the order received.
    /// - Returns: whether the file was written; `errno` says why not.
    func write(to path: String) -> Bool {
        guard let file = fopen(path, "w") else { return false }
        let count = min(claimed.load(ordering: .acquiring), capacity)
        for index in 0..<count { fputs("\(keys[index]) \(stamps[index])\n", file) }
        return fclose(file) == 0
    }
}

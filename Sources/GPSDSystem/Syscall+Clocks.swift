import Glibc

extension Syscall {
    /// The CPU time the calling thread has used (`CLOCK_THREAD_CPUTIME_ID`): it grows only while the thread runs,
    /// so it leaves out time spent asleep, waiting, stopped or waiting for a processor.
    package static func threadCPUTime() -> Duration {
        var now = timespec()
        // Fails only for a clock the kernel lacks: every Linux since 2.6.12 has this one.
        let result = clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        precondition(result == 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed: \(errno)")
        return .seconds(now.tv_sec) + .nanoseconds(now.tv_nsec)
    }

    /// Sleeps the calling thread for `duration` on the monotonic clock (`clock_nanosleep`). A signal may end the
    /// sleep early: callers measure the time that passed rather than trust it.
    package static func sleep(for duration: Duration) {
        let (seconds, attoseconds) = duration.components
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        _ = clock_nanosleep(CLOCK_MONOTONIC, 0, &request, nil)
    }
}

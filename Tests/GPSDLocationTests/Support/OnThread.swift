import Foundation

/// Runs blocking `body` on a thread of its own and awaits its result, so a test that blocks (a join, a
/// semaphore) never holds one of the few threads of Swift's cooperative pool: tests run in parallel, and two
/// blocked pool threads on a two-core machine would leave none for the test that unblocks them.
func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread.detachNewThread { continuation.resume(returning: body()) }
    }
}

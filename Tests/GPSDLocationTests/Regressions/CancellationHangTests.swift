import Foundation
import GPSDLocation
import GPSDTestSupport
import Testing

/// Cancelling the task of the last consumer of a replay while the replay's thread hands it a fix. The cancellation
/// handler runs while Swift's runtime holds the task's status lock, and the replay's thread, resuming that task,
/// waits for the lock: had the handler given the subscription back there (closing the session joins the replay's
/// thread), each would wait for the other for ever. Seen in gdb on `whereami --demo --speed 0 --sky`, which hung
/// at times; the handler's work now runs on a thread of its own. A race, so many rounds (`HANG_ROUNDS` sets
/// how many); these rounds did not happen to hang before that change, in 5,000 tried.
@Suite("Regressions: cancelling a replay's last consumer", .timeLimit(.minutes(2)))
struct CancellationHangTests {
    private static let drive = Fixtures.directory.deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/WhereAmICore/Resources/drive.gpsd.json")

    @Test("cancelling the task of a replay's only stream never hangs, whenever it comes")
    func cancellingTheOnlyStreamOfAReplayNeverHangs() async throws {
        for round in 0..<(Int(ProcessInfo.processInfo.environment["HANG_ROUNDS"] ?? "") ?? 100) {
            let gps = AsyncLocationManager(recording: Self.drive, pace: .asFastAsPossible)
            let wanted = round % 7 + 1
            let (taken, took) = AsyncStream.makeStream(of: Void.self)
            let consumer = Task {
                var count = 0
                for try await _ in gps.updates() {
                    count += 1
                    if count == wanted { took.yield() }
                }
                return count
            }
            for await _ in taken { break }
            consumer.cancel()
            // The stream ends (what was buffered may still come): it neither hangs nor fails.
            let count = try await consumer.value
            #expect(count >= wanted)
            await gps.stop()
        }
    }

    @Test("cancelling a group of a replay's fix and satellite streams never hangs, whenever it comes")
    func cancellingAGroupOfStreamsOfAReplayNeverHangs() async throws {
        for round in 0..<(Int(ProcessInfo.processInfo.environment["HANG_ROUNDS"] ?? "") ?? 100) {
            let gps = AsyncLocationManager(recording: Self.drive, pace: .asFastAsPossible)
            let wanted = round % 7 + 1
            let fixes = gps.updates()
            let skies = gps.satelliteUpdates()
            await withThrowingTaskGroup(of: Void.self) { group in
                let (taken, took) = AsyncStream.makeStream(of: Void.self)
                group.addTask {
                    var count = 0
                    for try await _ in fixes {
                        count += 1
                        if count == wanted { took.yield() }
                    }
                }
                group.addTask { for await _ in skies {} }
                for await _ in taken { break }
                group.cancelAll()
            }
            await gps.stop()
        }
    }

    /// A request's cancellation handler runs holding the status lock of its task's parent too: had it given the
    /// subscription back there, being the last (the parent's stream gives its own back on a thread of its own),
    /// it would close the session and join the replay's thread while that thread resumes the parent.
    @Test("cancelling a task with a stream and a child's request of a replay never hangs, whenever it comes")
    func cancellingAStreamAndAChildRequestOfAReplayNeverHangs() async throws {
        for round in 0..<(Int(ProcessInfo.processInfo.environment["HANG_ROUNDS"] ?? "") ?? 100) {
            let gps = AsyncLocationManager(recording: Self.drive, pace: .asFastAsPossible)
            let wanted = round % 7 + 1
            let (taken, took) = AsyncStream.makeStream(of: Void.self)
            let consumer = Task { () -> (Int, (any Error)?) in
                // No fix of the recording is this accurate: the request waits until its task is cancelled.
                async let request = gps.requestLocation(timeout: AsyncLocationManager.noTimeout, desiredAccuracy: 0.01)
                var count = 0
                do {
                    for try await _ in gps.updates() {
                        count += 1
                        if count == wanted { took.yield() }
                    }
                } catch {
                    return (count, error)
                }
                do {
                    _ = try await request
                    return (count, nil)
                } catch {
                    return (count, error)
                }
            }
            for await _ in taken { break }
            consumer.cancel()
            let (count, error) = await consumer.value
            #expect(count >= wanted, "round \(round)")
            // The request ends with the cancellation, or, should the consumer have taken the whole recording first
            // on a busy machine, with its end.
            #expect(error is CancellationError || error is LocationError, "round \(round): \(String(describing: error))")
            await gps.stop()
        }
    }
}

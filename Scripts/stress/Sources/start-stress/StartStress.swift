import Foundation
import GPSDLocation
import Synchronization

/// Starts MANAGERS managers at once (8 unless given), each replaying the recording at PATH as fast as possible to a
/// fix stream, a satellite stream, a status stream and a one-shot request, from threads that all start together. It
/// exits 0 when every manager replayed the recording whole, 1 when one did not. Scripts/start-stress runs it many
/// times, each a fresh process, and counts the runs that did not end.
@main
enum StartStress {
    typealias Outcome = (fixes: Int, skies: Int, requested: Bool)

    final class Outcomes: Sendable {
        let list = Mutex<[Outcome]>([])
    }

    /// What has not ended yet, by manager and part, for the report of a run that hangs.
    static let pending = Mutex<Set<String>>([])
    static func begin(_ part: String) { _ = pending.withLock { $0.insert(part) } }
    static func end(_ part: String) { _ = pending.withLock { $0.remove(part) } }

    static func main() {
        let arguments = CommandLine.arguments.dropFirst()
        guard let path = arguments.first else {
            FileHandle.standardError.write(Data("usage: start-stress RECORDING [MANAGERS]\n".utf8))
            exit(64)
        }
        let count = arguments.dropFirst().first.flatMap { Int($0) } ?? 8
        let recording = URL(fileURLWithPath: path)
        // Every manager starts from a thread of its own, released at once, so that their first calls into the
        // runtime and the library race each other.
        let start = DispatchSemaphore(value: 0)
        let outcomes = Outcomes()
        let done = DispatchGroup()
        for index in 0..<count {
            done.enter()
            Thread {
                start.wait()
                Task {
                    let outcome = await replay(recording, index)
                    outcomes.list.withLock { $0.append(outcome) }
                    done.leave()
                }
            }.start()
        }
        for _ in 0..<count { start.signal() }
        // A run that has not ended in 10 s says what it waits for, then goes on waiting.
        if done.wait(timeout: .now() + 10) == .timedOut {
            let parts = pending.withLock { $0 }.sorted()
            FileHandle.standardError.write(Data("start-stress: not ended after 10 s: \(parts.joined(separator: ", "))\n".utf8))
            done.wait()
        }
        let ended = outcomes.list.withLock { $0 }
        let fixes = Set(ended.map(\.fixes))
        let whole = ended.count == count && fixes.count == 1 && fixes.first! > 0 && ended.allSatisfy(\.requested)
        print("\(count) managers: fixes \(ended.map(\.fixes)), skies \(ended.map(\.skies))")
        exit(whole ? 0 : 1)
    }

    /// One manager's replay: fixes and satellites counted to the end of the recording, with a request beside them.
    static func replay(_ recording: URL, _ index: Int) async -> Outcome {
        let gps = AsyncLocationManager(recording: recording, pace: .asFastAsPossible)
        // The sequences are made here, before any child task runs. The fix stream first: it starts the replay, which
        // then waits for it, so it gets every fix whenever the request joins. And a sequence made after stop() is
        // not one that stop() ends.
        let fixStream = gps.updates()
        let satellites = gps.satelliteUpdates()
        let statusChanges = gps.statusUpdates()
        async let skies: Int = {
            begin("\(index) satellites"); defer { end("\(index) satellites") }
            var seen = 0
            for await _ in satellites { seen += 1 }
            return seen
        }()
        async let statuses: Int = {
            begin("\(index) statuses"); defer { end("\(index) statuses") }
            var seen = 0
            for await _ in statusChanges { seen += 1 }
            return seen
        }()
        async let requested: Bool = {
            begin("\(index) request"); defer { end("\(index) request") }
            do {
                _ = try await gps.requestLocation(timeout: .seconds(60))
                return true
            } catch {
                FileHandle.standardError.write(Data("start-stress: request: \(error)\n".utf8))
                return false
            }
        }()
        var fixes = 0
        begin("\(index) fixes")
        do {
            for try await _ in fixStream { fixes += 1 }
        } catch {
            FileHandle.standardError.write(Data("start-stress: \(error)\n".utf8))
        }
        end("\(index) fixes")
        let wasRequested = await requested
        begin("\(index) stop")
        await gps.stop()
        end("\(index) stop")
        let (seenSkies, _) = await (skies, statuses)
        return (fixes, seenSkies, wasRequested)
    }
}

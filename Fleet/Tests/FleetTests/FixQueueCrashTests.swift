import FleetCore
import FleetUplink
import Foundation
import GPSDLocation
import FleetTestSupport
import GRDB
import Testing

/// A SIGKILL loses no fix an append returned for: a child process (this test binary again, running only
/// ``FixQueueCrashChild``) appends fixes and reports each seq once its append has returned; it is killed while it
/// appends, and the queue reopened.
@Suite struct FixQueueCrashTests {
    @Test(.timeLimit(.minutes(5)))
    func everyFixAnAppendReturnedForSurvivesSIGKILL() async throws {
        try await withScratchDirectory("fixqueue-crash") { directory in
            let wanted = 300
            let child = Process()
            child.executableURL = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            child.arguments = ["--testing-library", "swift-testing", "--filter", "FixQueueCrashChild"]
            child.environment = ProcessInfo.processInfo.environment.merging(
                [FixQueueCrashChild.directoryVariable: directory.path]) { $1 }
            let output = Pipe()
            child.standardInput = FileHandle.nullDevice
            child.standardOutput = output
            child.standardError = FileHandle.nullDevice
            let (chunks, continuation) = AsyncStream.makeStream(of: Data.self)
            let exited = AsyncStream.makeStream(of: Void.self)
            child.terminationHandler = { _ in exited.continuation.finish() }
            try child.run()
            // Blocking reads on a thread of their own, until the child's end of the pipe closes.
            let reader = output.fileHandleForReading
            Thread.detachNewThread {
                while case let data = reader.availableData, !data.isEmpty { continuation.yield(data) }
                continuation.finish()
            }

            var reported: [Int64] = []
            var pending = Data()
            for await chunk in chunks {
                pending.append(chunk)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[..<newline], as: UTF8.self)
                    pending.removeSubrange(...newline)
                    let words = line.split(separator: " ")
                    guard words.count == 3, words[0] == "appended", words[2] == "end", let seq = Int64(words[1]) else {
                        continue
                    }
                    reported.append(seq)
                    if reported.count == wanted { kill(child.processIdentifier, SIGKILL) }
                }
            }
            // What is left in `pending` is a line the kill cut: not a report.
            for await _ in exited.stream {}
            #expect(child.terminationReason == .uncaughtSignal && child.terminationStatus == SIGKILL)
            try #require(reported.count >= wanted)
            #expect(reported == Array(1...Int64(reported.count)))

            let queue = try FixQueue(directory: directory.path, vehicle: FixQueueCrashChild.vehicle)
            let queued = try queue.batch(after: 0, limit: .max).map(\.seq)
            // Every reported one; at most one more, whose append was under way when the kill came.
            #expect(Array(queued.prefix(reported.count)) == reported)
            #expect(queued.count <= reported.count + 1)
            #expect(queue.statistics.lastSeq == Int64(queued.count))
            #expect(queue.statistics.depth == queued.count)
            for fix in try queue.batch(after: 0, limit: 5) {
                let back = try FleetMessage(payload: fix.payload, topic: FleetTopic.fix(FixQueueCrashChild.vehicle))
                #expect(back.location == FixQueueTests.fix(Int(fix.seq)))
            }
        }
    }
}

/// The child of ``FixQueueCrashTests``: runs only when its environment names a directory.
@Suite struct FixQueueCrashChild {
    static let directoryVariable = "FIXQUEUE_CRASH_CHILD_DIRECTORY"
    static let vehicle = try! VehicleID("crash-1")

    @Test(.enabled(if: ProcessInfo.processInfo.environment[directoryVariable] != nil))
    func appendUntilKilled() throws {
        let directory = try #require(ProcessInfo.processInfo.environment[Self.directoryVariable])
        let queue = try FixQueue(directory: directory, vehicle: Self.vehicle)
        // Bounded, should the parent never kill it; a parent gone ends it at the next write (SIGPIPE).
        for second in 1...100_000 {
            let seq = try queue.append(FixQueueTests.fix(second)).seq
            // Unbuffered: the line is out before the next append starts.
            FileHandle.standardOutput.write(Data("appended \(seq) end\n".utf8))
        }
    }
}

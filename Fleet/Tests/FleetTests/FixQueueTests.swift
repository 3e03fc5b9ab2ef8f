import FleetCore
import FleetUplink
import Foundation
import GPSDLocation
import FleetTestSupport
import GRDB
import Testing

/// The uplink's queue on a real SQLite file in a scratch directory of its own per test.
@Suite struct FixQueueTests {
    let vehicle = try! VehicleID("robot-7")

    /// Fix number `second` of a drive east along the equator at 10 m/s.
    static func fix(_ second: Int) -> Location {
        Location(coordinate: .init(latitude: 0.001 * Double(second % 90), longitude: Double(second) * 10 / 111_319.49),
                 altitude: 50, horizontalAccuracy: 3.5, verticalAccuracy: 8, speed: 10, course: 90,
                 timestamp: Date(timeIntervalSince1970: 1_748_779_200 + Double(second)), fix: .threeDimensional,
                 status: .gps, device: "/dev/ttyACM0")
    }

    static func fixes(_ seconds: ClosedRange<Int>) -> [Location] { seconds.map(fix) }

    /// Whole seconds, which a REAL column keeps exactly.
    static func wallClock(_ second: Int) -> Date { Date(timeIntervalSince1970: 1_780_000_000 + Double(second)) }

    func seqs(_ queue: FixQueue) throws -> [Int64] {
        try queue.batch(after: 0, limit: .max).map(\.seq)
    }

    @Test func walModeAndFullSyncAreOnEveryOpen() async throws {
        try await withScratchDirectory("fixqueue") { directory in
            for _ in 1...2 {
                let queue = try FixQueue(directory: directory.path, vehicle: vehicle)
                #expect(try queue.pragma("journal_mode") == "wal")
                #expect(try queue.pragma("synchronous") == "2", "FULL: each commit syncs the WAL")
                #expect(try queue.pragma("locking_mode") == "exclusive")
                try queue.append(Self.fix(1))
                try queue.close()
            }
            #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("queue.sqlite").path))
        }
    }

    @Test func aQueueHasAnIdentityOfItsOwnKeptAcrossReopenAndNewWhenMadeAgain() async throws {
        try await withScratchDirectory("fixqueue") { directory in
            var queue = try FixQueue(directory: directory.path, vehicle: vehicle)
            let identity = try #require(queue.identity)
            #expect(try queue.append(Self.fix(1)).queue == identity, "every fix carries it")
            try queue.close()
            queue = try FixQueue(directory: directory.path, vehicle: vehicle)
            #expect(queue.identity == identity)
            try queue.close()
            try FileManager.default.removeItem(at: directory)
            queue = try FixQueue(directory: directory.path, vehicle: vehicle)
            #expect(queue.identity != nil && queue.identity != identity, "a queue made again is another queue")
            #expect(try queue.append(Self.fix(2)).seq == 1)
            try queue.close()
        }
    }

    /// A queue file of the first layout (no identity) keeps its fixes and its numbering, and no identity: its
    /// fixes may have been sent before without one, and must meet the same key when sent again.
    @Test func aQueueOfTheFirstLayoutIsKeptWithoutAnIdentity() async throws {
        try await withScratchDirectory("fixqueue") { directory in
            let path = directory.appendingPathComponent("queue.sqlite").path
            let payload = try FleetMessage(vehicle: vehicle, seq: 7, location: Self.fix(7)).payload()
            let old = try DatabaseQueue(path: path)
            try old.write { db in
                try db.execute(sql: """
                    CREATE TABLE fixes (seq INTEGER PRIMARY KEY, payload BLOB NOT NULL, queued REAL NOT NULL);
                    CREATE TABLE queue (only INTEGER PRIMARY KEY CHECK (only = 1), vehicle TEXT NOT NULL,
                                        last_seq INTEGER NOT NULL, dropped INTEGER NOT NULL);
                    PRAGMA user_version = 1;
                    INSERT INTO queue VALUES (1, 'robot-7', 7, 0);
                    """)
                try db.execute(sql: "INSERT INTO fixes VALUES (7, ?, 1780000000)", arguments: [Data(payload)])
            }
            try old.close()
            let queue = try FixQueue(directory: directory.path, vehicle: vehicle)
            #expect(queue.identity == nil)
            #expect(try queue.batch(after: 0, limit: 10) == [QueuedFix(seq: 7, payload: payload)])
            let next = try queue.append(Self.fix(8))
            #expect(next.seq == 8 && next.queue == nil)
            #expect(try queue.pragma("user_version") == "2")
            try queue.close()
        }
    }

    @Test func seqsCountFromOneAndSurviveReopen() async throws {
        try await withScratchDirectory("fixqueue") { directory in
            var queue = try FixQueue(directory: directory.path, vehicle: vehicle)
            #expect(queue.statistics == FixQueueStatistics(depth: 0, dropped: 0, lastSeq: 0, oldestQueuedAt: nil))
            let messages = try (1...3).map { try queue.append(Self.fix($0), at: Self.wallClock($0)) }
            #expect(messages.map(\.seq) == [1, 2, 3])
            #expect(messages.map(\.vehicle) == [vehicle, vehicle, vehicle])
            #expect(messages.map(\.location) == Self.fixes(1...3))
            try queue.close()

            queue = try FixQueue(directory: directory.path, vehicle: vehicle)
            #expect(queue.statistics == FixQueueStatistics(depth: 3, dropped: 0, lastSeq: 3,
                                                           oldestQueuedAt: Self.wallClock(1)))
            let more = try queue.append(contentsOf: Self.fixes(4...6), at: Self.wallClock(4))
            #expect(more.map(\.seq) == [4, 5, 6])
            #expect(try seqs(queue) == [1, 2, 3, 4, 5, 6])
            #expect(queue.statistics.lastSeq == 6 && queue.statistics.depth == 6)
        }
    }

    @Test func seqsAreNeverReusedAfterRemovalAndReopen() async throws {
        try await withScratchDirectory("fixqueue") { directory in
            var queue = try FixQueue(directory: directory.path, vehicle: vehicle)
            try queue.append(contentsOf: Self.fixes(1...3))
            try queue.remove([3])
            #expect(queue.statistics.lastSeq == 3)
            try queue.close()

            queue = try FixQueue(directory: directory.path, vehicle: vehicle)
            #expect(queue.statistics.lastSeq == 3)
            #expect(try queue.append(Self.fix(4)).seq == 4)
            try queue.remove([1, 2, 4])
            #expect(queue.statistics.depth == 0)
            try queue.close()

            queue = try FixQueue(directory: directory.path, vehicle: vehicle)
            #expect(queue.statistics == FixQueueStatistics(depth: 0, dropped: 0, lastSeq: 4, oldestQueuedAt: nil))
            #expect(try queue.append(Self.fix(5)).seq == 5)
            #expect(try seqs(queue) == [5])
        }
    }

    @Test func theCapDropsTheOldestAndCountsThemAcrossReopen() async throws {
        try await withScratchDirectory("fixqueue") { directory in
            var queue = try FixQueue(directory: directory.path, vehicle: vehicle, capacity: 3)
            for second in 1...5 { try queue.append(Self.fix(second), at: Self.wallClock(second)) }
            #expect(try seqs(queue) == [3, 4, 5])
            #expect(queue.statistics == FixQueueStatistics(depth: 3, dropped: 2, lastSeq: 5,
                                                           oldestQueuedAt: Self.wallClock(3)))
            try queue.close()

            queue = try FixQueue(directory: directory.path, vehicle: vehicle, capacity: 3)
            #expect(queue.statistics == FixQueueStatistics(depth: 3, dropped: 2, lastSeq: 5,
                                                           oldestQueuedAt: Self.wallClock(3)))
            // More in one append than the queue holds: the newest three stay, all the others are counted.
            let messages = try queue.append(contentsOf: Self.fixes(6...10), at: Self.wallClock(6))
            #expect(messages.map(\.seq) == [6, 7, 8, 9, 10])
            #expect(try seqs(queue) == [8, 9, 10])
            #expect(queue.statistics.dropped == 7 && queue.statistics.depth == 3)
            #expect(queue.statistics.oldestQueuedAt == Self.wallClock(6))
            try queue.close()

            // Opened with a smaller cap, it drops down to it at once, and counts that too.
            queue = try FixQueue(directory: directory.path, vehicle: vehicle, capacity: 1)
            #expect(try seqs(queue) == [10])
            #expect(queue.statistics == FixQueueStatistics(depth: 1, dropped: 9, lastSeq: 10,
                                                           oldestQueuedAt: Self.wallClock(6)))
            try queue.close()
            queue = try FixQueue(directory: directory.path, vehicle: vehicle, capacity: 3)
            #expect(queue.statistics.dropped == 9)
        }
    }

    @Test func batchesComeInOrderAfterTheGivenSeq() async throws {
        try await withScratchDirectory("fixqueue") { directory in
            let queue = try FixQueue(directory: directory.path, vehicle: vehicle)
            try queue.append(contentsOf: Self.fixes(1...10))
            #expect(try queue.batch(after: 0, limit: 4).map(\.seq) == [1, 2, 3, 4])
            #expect(try queue.batch(after: 4, limit: 4).map(\.seq) == [5, 6, 7, 8])
            #expect(try queue.batch(after: 8, limit: 4).map(\.seq) == [9, 10])
            #expect(try queue.batch(after: 10, limit: 4).isEmpty)
            #expect(try queue.batch(after: 0, limit: 0).isEmpty)
            try queue.remove([5, 6])
            #expect(try queue.batch(after: 4, limit: 2).map(\.seq) == [7, 8])
            #expect(try queue.batch(after: -1, limit: 1).map(\.seq) == [1])
        }
    }

    @Test func newestIsTheLastAppendedStillQueued() async throws {
        try await withScratchDirectory("fixqueue") { directory in
            let queue = try FixQueue(directory: directory.path, vehicle: vehicle)
            #expect(try queue.newest() == nil)
            let messages = try queue.append(contentsOf: Self.fixes(1...3))
            #expect(try queue.newest() == QueuedFix(seq: 3, payload: try messages[2].payload()))
            try queue.remove([3])
            #expect(try queue.newest()?.seq == 2)
            try queue.remove([1, 2])
            #expect(try queue.newest() == nil)
        }
    }

    @Test func removeIsIdempotentAndKeepsTheStatistics() async throws {
        try await withScratchDirectory("fixqueue") { directory in
            let queue = try FixQueue(directory: directory.path, vehicle: vehicle)
            for second in 1...3 { try queue.append(Self.fix(second), at: Self.wallClock(second)) }
            #expect(queue.statistics.oldestQueuedAt == Self.wallClock(1))

            try queue.remove([1])
            let afterOne = FixQueueStatistics(depth: 2, dropped: 0, lastSeq: 3, oldestQueuedAt: Self.wallClock(2))
            #expect(queue.statistics == afterOne)
            try queue.remove([1])
            try queue.remove([])
            #expect(queue.statistics == afterOne)
            #expect(try seqs(queue) == [2, 3])

            // The newest first, then one that was never there: the oldest stays as it is.
            try queue.remove([3, 99])
            #expect(queue.statistics == FixQueueStatistics(depth: 1, dropped: 0, lastSeq: 3,
                                                           oldestQueuedAt: Self.wallClock(2)))
            try queue.remove([2, 2])
            #expect(queue.statistics == FixQueueStatistics(depth: 0, dropped: 0, lastSeq: 3, oldestQueuedAt: nil))
            #expect(try seqs(queue).isEmpty)
        }
    }

    @Test func anotherVehiclesQueueIsRefused() async throws {
        try await withScratchDirectory("fixqueue") { directory in
            try FixQueue(directory: directory.path, vehicle: vehicle).append(Self.fix(1))
            #expect(throws: FixQueueError.otherVehicle(found: "robot-7")) {
                try FixQueue(directory: directory.path, vehicle: try VehicleID("robot-8"))
            }
            // Refusing it changed nothing.
            let queue = try FixQueue(directory: directory.path, vehicle: vehicle)
            #expect(queue.statistics.lastSeq == 1 && queue.statistics.depth == 1)
        }
    }

    @Test func aSecondQueueOnTheSameFileIsRefusedWhileTheFirstIsOpen() async throws {
        try await withScratchDirectory("fixqueue") { directory in
            let first = try FixQueue(directory: directory.path, vehicle: vehicle)
            try first.append(Self.fix(1))
            #expect(throws: FixQueueError.inUse(first.path)) {
                try FixQueue(directory: directory.path, vehicle: vehicle)
            }
            #expect(try first.append(Self.fix(2)).seq == 2)
            try first.close()
            #expect(throws: FixQueueError.self) { try first.append(Self.fix(3)) }
            #expect(first.statistics.lastSeq == 2)
            let second = try FixQueue(directory: directory.path, vehicle: vehicle)
            #expect(try seqs(second) == [1, 2])
        }
    }

    @Test func payloadsReadBackToTheSameFixes() async throws {
        try await withScratchDirectory("fixqueue") { directory in
            let queue = try FixQueue(directory: directory.path, vehicle: vehicle)
            let messages = try queue.append(contentsOf: Self.fixes(1...5))
            let queued = try queue.batch(after: 0, limit: 10)
            #expect(queued.count == 5)
            for (fix, message) in zip(queued, messages) {
                let back = try FleetMessage(payload: fix.payload, topic: FleetTopic.fix(vehicle))
                #expect(back == message)
                #expect(back.seq == fix.seq)
                #expect(fix.payload == (try message.payload()))
            }
        }
    }

    @Test func unsendableFixesAppendNothing() async throws {
        try await withScratchDirectory("fixqueue") { directory in
            let queue = try FixQueue(directory: directory.path, vehicle: vehicle)
            try queue.append(Self.fix(1))
            var nowhere = Self.fix(2)
            nowhere.coordinate.latitude = .nan
            #expect(throws: FixQueueError.unsendable(.unsendableFix("its position is not finite"))) {
                try queue.append(nowhere)
            }
            #expect(throws: FixQueueError.self) {
                try queue.append(contentsOf: [Self.fix(2), nowhere, Self.fix(3)])
            }
            #expect(queue.statistics.lastSeq == 1 && queue.statistics.depth == 1)
            #expect(try queue.append(Self.fix(2)).seq == 2)
            #expect(try seqs(queue) == [1, 2])
        }
    }

    @Test func aCapacityUnderOneIsRefused() async throws {
        try await withScratchDirectory("fixqueue") { directory in
            #expect(throws: FixQueueError.invalidCapacity) {
                try FixQueue(directory: directory.path, vehicle: vehicle, capacity: 0)
            }
            #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("queue.sqlite").path))
        }
    }
}

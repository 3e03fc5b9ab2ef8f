import Foundation
import GPSDLocation
import GPSDTestSupport
import Testing

extension WhereAmIProcessTests {
    /// `whereami --follow` against a real gpsd whose receiver also reports a heading ($GPHDT after each epoch):
    /// each JSON line and CSV row carries the heading of its time, and the fix's age as it was written.
    @Suite("whereami --follow: the heading and the age", .enabled(if: GPSFake.isAvailable), .timeLimit(.minutes(1)))
    struct FollowHeadingTests {
        static let epochs = 8
        /// The heading after epoch `second`: a different one each epoch, so a record shows which it carries.
        static func heading(_ second: Int) -> Double { 100 + 7 * Double(second) }

        /// The records of `whereami --follow --count 6 --format FORMAT -q` against the log, each as the members
        /// of its JSON line or the cells of its CSV row, by name.
        private func follow(format: String) async throws -> [[String: String]] {
            let cycles = (0..<Self.epochs).map { second in
                NMEA.Track.epoch(second) + NMEA.sentence(String(format: "GPHDT,%.1f,T", Self.heading(second)))
            }
            return try await withScratchDirectory { directory in
                let log = try writeLog(cycles, named: "heading.nmea", in: directory)
                return try await GPSFake.run(logs: [log], cycle: 0.02, once: true, lingerAfterEnd: 30, waitForClient: true) { fake in
                    let result = try await whereami("--follow", "--count", "6", "--format", format, "-q", fake.server)
                    guard await requireLive(result.status == 0 && !result.endedBySignal, "exit 0: \(result)", fake: fake)
                    else { return [] }
                    if format == "csv" {
                        let rows = try await Formats.csvRows(result.stdout)
                        _ = try await Formats.csvRecords(result.stdout)   // the documented columns, numbers as numbers
                        return rows.dropFirst().map { Dictionary(uniqueKeysWithValues: zip(rows[0], $0)) }
                    }
                    return try result.stdoutLines.map { line in
                        _ = try Formats.jsonRecord(line)   // the documented members, numbers as numbers
                        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                        return object.mapValues { value in Formats.number(value).map { "\($0)" } ?? "\(value)" }
                    }
                }
            }
        }

        @Test("each record carries the fix's age and, from the second epoch on, the heading of its epoch or the one before",
              arguments: ["json", "csv"])
        func headingAndAge(format: String) async throws {
            let records = try await follow(format: format)
            try #require(records.count == 6, "\(records)")
            let seconds = Dictionary(uniqueKeysWithValues: (0..<Self.epochs).map { (GPSDTime.string(from: NMEA.Track.time($0))!, $0) })
            for (index, record) in records.enumerated() {
                let second = try #require(record["timestamp"].flatMap { seconds[$0] }, "an epoch of the log: \(record)")
                let age = try #require(record["age"].flatMap(Double.init), "an age: \(record)")
                #expect(age >= 0, "\(record)")
                // gpsd reports the HDT after the epoch's fix, and whereami writes an epoch once it is whole: its own
                // heading, or the one before if the epoch was written first. The first epoch has none before it.
                let heading = record["heading"].flatMap { $0.isEmpty ? nil : Double($0) }
                if index == 0, heading == nil { continue }
                let value = try #require(heading, "a heading: \(record)")
                #expect([Self.heading(second), Self.heading(second - 1)].contains(value), "epoch \(second): \(record)")
            }
        }
    }
}

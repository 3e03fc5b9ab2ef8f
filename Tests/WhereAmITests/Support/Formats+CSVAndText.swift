import Foundation
import GPSDTestSupport
import Testing

extension Formats {
    // MARK: CSV

    /// The rows of a CSV document, as Python's `csv` module (strict mode) reads them.
    static func csvRows(_ text: String) async throws -> [[String]] {
        let script = """
            import csv, json, sys
            with open(sys.argv[1], encoding="utf-8", newline="") as file:
                json.dump(list(csv.reader(file, strict=True)), sys.stdout)
            """
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("whereami-\(UUID()).csv")
        try Data(text.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try await CLIProcess.start(["-c", script, file.path], executable: URL(fileURLWithPath: "/usr/bin/python3")).finish(deadline: .seconds(20))
        guard result.status == 0, !result.endedBySignal else {
            throw CSVError(message: "python3's csv module rejected the document: \(result)")
        }
        guard let rows = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String]] else {
            throw CSVError(message: "unexpected output of python3: \(result.stdout)")
        }
        return rows
    }

    struct CSVError: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    /// A whole `--format csv` document: a header row, then one row per fix with the header's columns.
    static func csvRecords(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [Record] {
        let rows = try await csvRows(text)
        let header = try #require(rows.first, "a header row", sourceLocation: sourceLocation)
        #expect(Set(header).count == header.count, "distinct column names: \(header)", sourceLocation: sourceLocation)
        let unknown = Set(header).subtracting(jsonFields)
        #expect(unknown.isEmpty, "undocumented columns \(unknown.sorted())", sourceLocation: sourceLocation)
        for required in ["timestamp", "latitude", "longitude", "altitude", "speed", "course", "fix", "status"] {
            #expect(header.contains(required), "column \(required)", sourceLocation: sourceLocation)
        }
        return try rows.dropFirst().map { row in
            try #require(row.count == header.count, "\(row.count) cells in \(row), \(header.count) columns",
                         sourceLocation: sourceLocation)
            let cells = Dictionary(uniqueKeysWithValues: zip(header, row))
            for (column, cell) in cells where numericFields.contains(column) && !cell.isEmpty {
                #expect(Double(cell).map(\.isFinite) == true, "\(column) '\(cell)' is a finite number",
                        sourceLocation: sourceLocation)
            }
            let timestamp = cells["timestamp"].flatMap { $0.isEmpty ? nil : $0 }
            if let timestamp {
                #expect(isISO8601UTCMilliseconds(timestamp), "timestamp \(timestamp)", sourceLocation: sourceLocation)
            }
            return Record(
                timestamp: timestamp,
                latitude: try #require(cells["latitude"].flatMap(Double.init), sourceLocation: sourceLocation),
                longitude: try #require(cells["longitude"].flatMap(Double.init), sourceLocation: sourceLocation),
                altitude: cells["altitude"].flatMap(Double.init), speed: cells["speed"].flatMap(Double.init),
                course: cells["course"].flatMap(Double.init), fix: cells["fix"])
        }
    }

    // MARK: Text

    /// `--follow --format text`: one line per fix, `TIME  LAT  LON  [ALTm]  [±ACCm]  [SPEEDm/s]  [COURSE°]  FIX`.
    static func textLineRecord(_ line: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> Record {
        let parts = line.components(separatedBy: "  ")
        try #require(parts.count >= 4, "time, latitude, longitude, fix in '\(line)'", sourceLocation: sourceLocation)
        let timestamp = parts[0]
        #expect(isISO8601UTCMilliseconds(timestamp), "time \(timestamp)", sourceLocation: sourceLocation)
        var record = Record(
            timestamp: timestamp,
            latitude: try #require(Double(parts[1]), "latitude '\(parts[1])'", sourceLocation: sourceLocation),
            longitude: try #require(Double(parts[2]), "longitude '\(parts[2])'", sourceLocation: sourceLocation),
            fix: parts.last)
        for part in parts.dropFirst(3).dropLast() {
            if part.hasPrefix("±") { continue }
            if part.hasSuffix("m/s") { record.speed = Double(part.dropLast(3)) }
            else if part.hasSuffix("°") { record.course = Double(part.dropLast()) }
            else if part.hasSuffix("m") { record.altitude = Double(part.dropLast()) }
            else { Issue.record("unexpected part '\(part)' in '\(line)'", sourceLocation: sourceLocation) }
        }
        return record
    }

    /// The one-fix text block: `Label:  value` rows; returns the values by label.
    static func textBlock(_ text: String) -> [String: String] {
        var rows: [String: String] = [:]
        for line in text.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            rows[String(line[..<colon])] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return rows
    }

    /// `52.5218061° N` → 52.5218061, `0.0012700° W` → -0.00127.
    static func hemisphereDegrees(_ text: String?) -> Double? {
        guard let text, let match = text.wholeMatch(of: /([0-9.]+)° ([NSEW])/), let value = Double(match.1) else {
            return nil
        }
        return match.2 == "S" || match.2 == "W" ? -value : value
    }
}

public import Foundation

/// A private directory for files a test writes (logs, recordings), named after `label`, removed when `body`
/// returns or throws.
public func withScratchDirectory<T>(_ label: String = "scratch", _ body: (URL) async throws -> T) async throws -> T {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("\(label)-\(UUID())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    return try await body(directory)
}

/// Writes `cycles` (NMEA text, one receiver cycle each) as the log `name` in `directory`.
public func writeLog(_ cycles: [String], named name: String, in directory: URL) throws -> URL {
    let url = directory.appendingPathComponent(name)
    try Data(cycles.joined().utf8).write(to: url)
    return url
}

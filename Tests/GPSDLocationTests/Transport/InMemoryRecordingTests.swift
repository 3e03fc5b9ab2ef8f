import Foundation
import GPSDLocation
import GPSDTestSupport
import Testing

/// A recording replayed from memory (what `whereami --demo` builds in) is the same replay as from its file.
@Suite("Recordings in memory", .timeLimit(.minutes(1)))
struct InMemoryRecordingTests {
    private static let drive = Fixtures.directory.deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/WhereAmICore/Resources/drive.gpsd.json")

    private func fixes(of gps: AsyncLocationManager) async throws -> [Location] {
        var fixes: [Location] = []
        for try await fix in gps.updates(bufferingPolicy: .unbounded) { fixes.append(fix) }
        return fixes
    }

    @Test func theContentsOfAFileReplayAsTheFileDoes() async throws {
        let contents = try [UInt8](Data(contentsOf: Self.drive))
        #expect(contents.count > 3 * 64 * 1024)   // read in several chunks, lines cut across them
        let fromMemory = try await fixes(of: AsyncLocationManager(
            recording: contents, named: "drive.gpsd.json", pace: .asFastAsPossible))
        let fromFile = try await fixes(of: AsyncLocationManager(recording: Self.drive, pace: .asFastAsPossible))
        #expect(fromMemory.count == 174)
        #expect(fromMemory == fromFile)
    }

    @Test func contentsWithoutReportsFailAsInvalidNamingTheRecording() async throws {
        let gps = AsyncLocationManager(recording: Array("not gpsd\n".utf8), named: "empty.json", pace: .asFastAsPossible)
        let error = await #expect(throws: LocationError.self) { try await fixes(of: gps) }
        #expect(error?.code == .invalidRecording)
        #expect(error?.message.contains("empty.json") == true, "\(String(describing: error))")
    }
}

import Foundation
import GPSDLocation
import GPSDTestSupport
import Testing

extension WhereAmIProcessTests {
    /// `--replay FILE` and `--demo`: recordings instead of gpsd (no gpsd needed).
    @Suite("whereami replaying recordings", .timeLimit(.minutes(1)))
    struct ReplayTests {
        /// The recording bundled with whereami, in the source tree.
        static let bundledRecording = packageDirectory
            .appendingPathComponent("Sources/WhereAmICore/Resources/drive.gpsd.json")

        @Test("the bundled recording exists and holds the drive's reports")
        func bundledRecordingIsThere() throws {
            try #require(FileManager.default.fileExists(atPath: Self.bundledRecording.path),
                         "Sources/WhereAmICore/Resources/drive.gpsd.json is missing")
            let text = try String(contentsOf: Self.bundledRecording, encoding: .utf8)
            try #require(!text.isEmpty, "Sources/WhereAmICore/Resources/drive.gpsd.json is empty")
            // gpspipe ends its lines with CR LF.
            let fixes = text.split(whereSeparator: \.isNewline)
                .filter { $0.contains(#""class":"TPV""#) && $0.contains(#""mode":3"#) }
            let track = try ExpectedTrack("drive")
            #expect(fixes.count == track.fixes.count,
                    "\(fixes.count) 3D TPVs for the \(track.fixes.count) fixes of drive.nmea")
        }

        @Test("--demo --speed 0 --format json -q prints one fix of the drive and exits 0")
        func demoOneShot() async throws {
            let track = try ExpectedTrack("drive")
            let result = try await whereami("--demo", "--speed", "0", "--format", "json", "-q")
            #expect(result.status == 0 && !result.endedBySignal, "\(result)")
            #expect(result.stderr.isEmpty, "\(result.stderr)")
            try #require(result.stdoutLines.count == 1, "\(result)")
            expectRecord(try Formats.jsonRecord(result.stdoutLines[0]), isAnEpochOf: track)
        }

        @Test("every --format json line decodes as a Location (one schema), equal to the library's own fix")
        func jsonLinesDecodeAsLocations() async throws {
            let result = try await whereami("--demo", "--follow", "--speed", "0", "--format", "json", "-q")
            #expect(result.status == 0, "\(result)")
            // The library, replaying the same recording, delivers the same fixes.
            let gps = AsyncLocationManager(recording: Self.bundledRecording, pace: .asFastAsPossible)
            var library: [Location] = []
            for try await fix in gps.updates(bufferingPolicy: .unbounded) { library.append(fix) }
            let decoded = try result.stdoutLines.map { try JSONDecoder().decode(Location.self, from: Data($0.utf8)) }
            #expect(decoded.count == 174)
            #expect(decoded == library)
        }

        @Test("a whereami copied alone to another folder runs --demo: the recording is built into it")
        func copiedBinaryRunsTheDemo() async throws {
            let folder = FileManager.default.temporaryDirectory
                .appendingPathComponent("whereami-alone-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
            defer { try? FileManager.default.removeItem(at: folder) }
            let copy = folder.appendingPathComponent("whereami")
            try FileManager.default.copyItem(at: BuiltProduct.url("whereami"), to: copy)
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["whereami"])
            let result = try await CLIProcess.start(["--demo", "--speed", "0", "--format", "json", "-q"], executable: copy)
                .finish(deadline: .seconds(30))
            #expect(result.status == 0 && !result.endedBySignal, "\(result)")
            try #require(result.stdoutLines.count == 1, "\(result)")
            expectRecord(try Formats.jsonRecord(result.stdoutLines[0]), isAnEpochOf: try ExpectedTrack("drive"))
        }

        @Test("--demo (text) says on stderr that it replays the bundled drive")
        func demoText() async throws {
            let result = try await whereami("--demo", "--speed", "0")
            #expect(result.status == 0, "\(result)")
            #expect(result.stderr.contains("replaying drive.gpsd.json"), "\(result.stderr)")
            let rows = Formats.textBlock(result.stdout)
            let latitude = try #require(Formats.hemisphereDegrees(rows["Latitude"]), "\(result.stdout)")
            #expect(abs(latitude - 52.52) < 0.05, "Alexanderplatz: \(latitude)")
        }

        // The replay as fast as possible must not lose fixes to a consumer that writes slower than the file is
        // read. That loss is a race, so each replay is repeated.

        @Test("--demo --follow --speed 0 prints every fix of the drive, in order (six runs)")
        func demoFollowWholeDrive() async throws {
            let track = try ExpectedTrack("drive")
            for run in 1...6 {
                let result = try await whereami("--demo", "--follow", "--speed", "0", "--format", "json", "-q")
                #expect(result.status == 0 && !result.endedBySignal, "run \(run): \(result)")
                let records = try result.stdoutLines.map { try Formats.jsonRecord($0) }
                expectWholeTrack(records, equals: track)
            }
        }

        @Test("--demo --follow --speed 0 into a reader that pauses for a second still gets every fix of the drive")
        func demoFollowIntoABusyReader() async throws {
            let track = try ExpectedTrack("drive")
            // The reader takes nothing for a second, with a pipe of one page: whereami's writes block after some
            // 13 lines while the replay, as fast as possible, reads the whole recording.
            let result = try await CLIProcess.start(["--demo", "--follow", "--speed", "0", "--format", "json", "-q"], slowReader: .seconds(1)).finish(deadline: .seconds(30))
            #expect(result.status == 0 && !result.endedBySignal, "\(result)")
            let records = try result.stdoutLines.map { try Formats.jsonRecord($0) }
            expectWholeTrack(records, equals: track)
        }

        @Test("--replay moving.gpsd.json --follow --speed 0 prints the moving track, in order (five runs)")
        func replayMovingTrack() async throws {
            let track = try ExpectedTrack("moving")
            for run in 1...5 {
                let result = try await whereami(
                    "--replay", Fixtures.url("moving.gpsd.json").path, "--follow", "--speed", "0", "--format", "json", "-q")
                #expect(result.status == 0 && !result.endedBySignal, "run \(run): \(result)")
                let records = try result.stdoutLines.map { try Formats.jsonRecord($0) }
                expectWholeTrack(records, equals: track)
            }
        }

        @Test("--replay … --follow --format gpx --speed 0 is one complete GPX document of the track")
        func replayGPX() async throws {
            let track = try ExpectedTrack("moving")
            let result = try await whereami(
                "--replay", Fixtures.url("moving.gpsd.json").path, "--follow", "--speed", "0", "--format", "gpx", "-q")
            #expect(result.status == 0, "\(result)")
            let records = try Formats.gpxRecords(result.stdout)
            #expect(!records.isEmpty)
            expectInOrder(records, of: track, carries: [.altitude, .fix])
        }

        @Test("--speed paces the replay: 10 s of the drive at --speed 20 take about half a second")
        func replayPace() async throws {
            let result = try await whereami("--demo", "--follow", "--count", "11", "--speed", "20", "--format", "json", "-q")
            #expect(result.status == 0, "\(result)")
            #expect(result.stdoutLines.count == 11)
            #expect(result.elapsed >= .milliseconds(450), "10 recorded seconds / 20: \(result.elapsed)")
            #expect(result.elapsed < .seconds(30), "a bound only a hang breaks: \(result.elapsed)")
        }

        @Test("--replay of a file that does not exist exits 66 and names it, before any status line",
              arguments: [[String](), ["--follow"], ["--sky"]])
        func replayMissingFile(options: [String]) async throws {
            // Without -q: the error is the one line on standard error, with no "replaying" or "connecting" before it.
            let result = try await whereami(options + ["--replay", "/nonexistent/recording.json"])
            #expect(result.status == 66 && !result.endedBySignal, "\(result)")
            #expect(result.stderr == "whereami: cannot read recording /nonexistent/recording.json: No such file or directory\n",
                    "the error alone: \(result.stderr)")
            #expect(result.stdout.isEmpty)
        }

        @Test("--replay of a directory exits 66 before any status line")
        func replayDirectory() async throws {
            let result = try await whereami("--replay", "/", "--follow")
            #expect(result.status == 66 && !result.endedBySignal, "\(result)")
            #expect(result.stderr == "whereami: cannot read recording /: Is a directory\n", "the error alone: \(result.stderr)")
        }

        @Test("--replay of a file without gpsd reports exits 66")
        func replayEmptyFile() async throws {
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("whereami-empty-\(UUID()).json")
            try Data("not a gpsd report\n\n".utf8).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let result = try await whereami("--replay", file.path, "--speed", "0", "-q")
            #expect(result.status == 66 && !result.endedBySignal, "\(result)")
            #expect(result.stderr.contains("no gpsd reports"), "\(result.stderr)")
        }

        @Test("a reader that goes away (| head -n 1) ends a replayed stream quietly with status 0")
        func readerGoesAway() async throws {
            // CLIProcess starts bash with SIGPIPE at its default, as in a user's shell (this test process may
            // ignore it, and ignored signals are inherited).
            // At --speed 2 the drive (174 s as recorded) plays for 87 s, a fix every 0.5 s: only ending at its next
            // write ends it before the 20-s deadline, past which the group is killed (and the status says so).
            let script = #"set -o pipefail; "$0" --demo --follow --speed 2 --format json -q | head -n 1"#
            let result = try await CLIProcess.start(["-c", script, BuiltProduct.url("whereami").path], executable: URL(fileURLWithPath: "/bin/bash")).finish(deadline: .seconds(20))
            #expect(result.status == 0 && !result.endedBySignal && !result.killedAfterDeadline,
                    "whereami's status (141 = killed by SIGPIPE), ended at its next write: \(result)")
            #expect(result.stdoutLines.count == 1)
        }
    }
}

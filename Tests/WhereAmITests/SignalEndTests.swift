import Foundation
import GPSDTestSupport
import Testing
@testable import WhereAmICore

#if canImport(Glibc)
import Glibc
#endif

extension WhereAmIProcessTests {
    /// A signal ends whereami whatever its output is doing: a pipe nobody reads, a terminal nobody reads. Each run
    /// ends by itself, with the status documented, and not by the last resort (the end request's thread ending it
    /// by the signal 0.8 s after it, which says `not ended` on standard error): the process itself has shown it
    /// ended within that bound, however slowly this machine ran the test.
    @Suite("whereami ends on a signal whatever its output does", .enabled(if: GPSFake.isAvailable), .timeLimit(.minutes(3)))
    struct SignalEndTests {
        /// Whether `bytes`, written in `format` into a pipe that took no more, holds whole records only: the
        /// header, then records none of which is cut.
        static func expectWhole(_ bytes: [UInt8], _ format: OutputFormat, sourceLocation: SourceLocation = #_sourceLocation) throws {
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(!text.isEmpty, "\(format): nothing was written before the pipe filled", sourceLocation: sourceLocation)
            switch format {
            case .geojson:
                // Features are separated by ",\n": the text after the last line break is one whole feature.
                let last = text.split(separator: "\n", omittingEmptySubsequences: false).last.map(String.init) ?? ""
                if !last.isEmpty {
                    #expect((try? JSONSerialization.jsonObject(with: Data(last.utf8))) != nil,
                            "\(format): the last feature is cut: \(last)", sourceLocation: sourceLocation)
                }
            default:
                #expect(text.hasSuffix("\n"), "\(format): a line is cut: \(text.suffix(200))", sourceLocation: sourceLocation)
                if format == .json {
                    for line in text.split(separator: "\n") { _ = try Formats.jsonRecord(String(line)) }
                }
            }
        }

        /// Starts `arguments` with standard output on an unread pipe of one page, waits until its writes have
        /// stalled, sends `signal`, and checks the end: status 74 (what was left could not be written), the
        /// reason on standard error, whole records in the pipe.
        private func stall(_ arguments: [String], format: OutputFormat, signal: Int32 = SIGTERM) async throws {
            let output = try StalledOutput(.pipe(full: false))
            let run = try output.start(BuiltProduct.url("whereami"), arguments + ["--format", format.rawValue])
            let stalled = try await output.waitUntilStalled(least: 3000)
            try #require(stalled, "\(format): the pipe did not fill: \(output.waiting) bytes; \(run.drainErrors())")
            let end = await run.end(by: signal)
            let name = signal == SIGTERM ? "SIGTERM" : signal == SIGINT ? "SIGINT" : "SIGHUP"
            #expect(end.status == 74 && !end.bySignal && end.after != nil, "\(format): \(end)")
            #expect(end.stderr.contains("standard output took nothing for 0.4 s after \(name)"), "\(format): \(end)")
            #expect(!end.stderr.contains("not ended"), "\(format): \(end)")
            try Self.expectWhole(output.readAll(), format)
        }

        @Test("--follow of a live gpsd into a pipe nobody reads, every format, then SIGTERM: status 74, whole records",
              arguments: OutputFormat.allCases)
        func followLive(format: OutputFormat) async throws {
            try await withGPSFake("moving.nmea", cycle: 0.02, once: false) { fake in
                try await stall(["--follow", "-q", fake.server], format: format)
            }
        }

        @Test("--follow of a replay (whose writes wait on its thread) into a pipe nobody reads, then SIGTERM, SIGINT or SIGHUP",
              arguments: [SIGTERM, SIGINT, SIGHUP])
        func followReplay(signal: Int32) async throws {
            try await stall(["--demo", "--follow", "--speed", "0", "-q"], format: .gpx, signal: signal)
        }

        @Test("--watch on a terminal nobody reads, then SIGTERM or SIGINT: status 74, the reason on standard error",
              arguments: [SIGTERM, SIGINT])
        func watch(signal: Int32) async throws {
            try await withGPSFake("moving.nmea", cycle: 0.02, once: false) { fake in
                let terminal = try StalledOutput(.terminal)
                let run = try terminal.start(BuiltProduct.url("whereami"), ["--watch", fake.server])
                // The panel's redraws fill the pty within seconds; its master shows the first 4 KiB waiting at most.
                let stalled = try await terminal.waitUntilStalled(least: 1024)
                try #require(stalled, "the terminal did not fill: \(terminal.waiting) bytes; \(run.drainErrors())")
                let end = await run.end(by: signal)
                #expect(end.status == 74 && !end.bySignal && end.after != nil, "\(end)")
                #expect(end.stderr.contains("standard output took nothing for 0.4 s after"), "\(end)")
                #expect(!end.stderr.contains("not ended"), "\(end)")
            }
        }

        @Test("one fix, and --sky, into a full pipe: SIGTERM ends them at once by its default action (status: the signal)",
              arguments: [["--demo"], ["--demo", "--sky"]])
        func oneShot(arguments: [String]) async throws {
            let output = try StalledOutput(.pipe(full: true))
            let run = try output.start(BuiltProduct.url("whereami"), arguments + ["--speed", "0", "-q"])
            // The replay's first fix (or sky) comes at once, and its write begins (the pipe opened again), to wait
            // on the full pipe.
            let writing = try await waitFor { run.hasOpenedItsOutputAgain }
            try #require(writing, "whereami never began to write: \(run.drainErrors())")
            let end = await run.end(by: SIGTERM)
            #expect(end.status == SIGTERM && end.bySignal && end.after != nil, "\(end)")
        }

        @Test("one fix while gpsd gives none: SIGTERM ends it by its default action")
        func oneShotWaiting() async throws {
            try await withGPSFake("nofix.nmea", once: false) { fake in
                let output = try StalledOutput(.pipe(full: false))
                let run = try output.start(BuiltProduct.url("whereami"), [fake.server])
                let waiting = try await waitFor { run.drainErrors().contains("waiting for a fix") }
                try #require(waiting, "\(run.drainErrors())")
                let end = await run.end(by: SIGTERM)
                #expect(end.status == SIGTERM && end.bySignal && end.after != nil, "\(end)")
            }
        }

        @Test("--watch whose terminal hangs up (its reads and writes fail with EIO): status 0, as SIGHUP's")
        func watchHangUp() async throws {
            try await withGPSFake("moving.nmea", cycle: 0.05, once: false) { fake in
                let terminal = try StalledOutput(.terminal)
                let run = try terminal.start(BuiltProduct.url("whereami"), ["--watch", fake.server])
                let drawn = try await waitFor { terminal.waiting > 0 }
                try #require(drawn, "the panel was never drawn: \(run.drainErrors())")
                terminal.hangUp()
                let end = await run.end(by: nil)
                #expect(end.status == 0 && !end.bySignal && end.after != nil, "\(end)")
            }
        }

        /// Looks at `condition` every 50 ms until it holds (true) or 60 s have passed (false).
        private func waitFor(_ condition: () -> Bool) async throws -> Bool {
            let end = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < end {
                if condition() { return true }
                try await Task.sleep(for: .milliseconds(50))   // between two looks, not a wait for the condition
            }
            return false
        }
    }
}

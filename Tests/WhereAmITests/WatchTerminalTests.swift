import Foundation
import GPSDTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension WhereAmIProcessTests {
    /// `whereami --watch` in a real terminal (a tmux pane running bash, or dash) against a real gpsd (gpsfake playing the
    /// drive): what the panel shows, that it redraws in place and follows the terminal's size, and that each way
    /// out leaves the terminal as it was.
    @Suite("whereami --watch in a terminal", .enabled(if: GPSFake.isAvailable), .timeLimit(.minutes(3)))
    struct WatchTerminalTests {
        static let marker = "shell-ready"

        /// The value of the panel's row `label` (`Latitude`, `Time`) on `screen`, if it has one.
        static func value(_ label: String, on screen: [String]) -> String? {
            guard let row = screen.first(where: { $0.hasPrefix(label + " ") }) else { return nil }
            let value = row.dropFirst(12).prefix(41).trimmingCharacters(in: .whitespaces)
            return value.isEmpty || value == "-" ? nil : value
        }

        /// Runs `body` with whereami --watch running in a tmux pane of 120 × 40 against gpsfake playing the drive,
        /// after `stty -a` has saved the terminal's modes in `before`; the panel has shown a position.
        private func watching(
            log: (URL) throws -> URL = { _ in Fixtures.url("drive.nmea") }, shell: Tmux.Shell = .bash,
            environment: String = "",
            _ body: (_ tmux: Tmux, _ fake: GPSFake, _ directory: URL) async throws -> Void
        ) async throws {
            try await withScratchDirectory("watch") { directory in
                try await GPSFake.run(logs: [try log(directory)], cycle: 0.1, waitForClient: true) { fake in
                    try await Tmux.run(columns: 120, rows: 40, in: directory, shell: shell) { tmux in
                        // The shell's own output says it is ready: the line typed holds the marker split by quotes.
                        try await tmux.type("stty -a > before; echo shell-\"\"ready")
                        try await tmux.waitForScreen("a shell") { Tmux.answered(Self.marker, on: $0) }
                        let whereami = BuiltProduct.url("whereami").path
                        try await tmux.type("\(environment)'\(whereami)' --watch \(fake.server); echo \"exit=$?\"")
                        try await tmux.waitForScreen("a position") { Self.value("Latitude", on: $0) != nil }
                        try await body(tmux, fake, directory)
                    }
                }
            }
        }

        /// After whereami has ended: its exit status (0), the normal screen back (the shell's line before it shown
        /// again) with the cursor shown, and the terminal's modes as they were before it.
        private func expectRestored(_ tmux: Tmux, in directory: URL, status: Int32 = 0) async throws {
            let screen = try await tmux.waitForScreen("whereami's exit") { Tmux.answered("exit=\(status)", on: $0) }
            #expect(try await tmux.display("#{alternate_on}") == "0")
            #expect(try await tmux.display("#{cursor_flag}") == "1")
            #expect(Tmux.answered(Self.marker, on: screen), "the normal screen is back: \(screen)")
            #expect(!screen.contains { $0.hasPrefix("Latitude") }, "\(screen)")
            try await tmux.type("stty -a > after; echo stty-\"\"saved")
            try await tmux.waitForScreen("the shell's answer") { Tmux.answered("stty-saved", on: $0) }
            let before = try Self.modes("before", in: directory)
            #expect(before.contains("icanon") && before.contains("echo"), "\(before)")
            #expect(before == (try Self.modes("after", in: directory)))
        }

        /// The process id of whereami, the child of the pane's shell.
        static func whereami(in tmux: Tmux) async throws -> Int32 {
            let shell = try #require(Int32(try await tmux.display("#{pane_pid}")))
            let children = try String(contentsOfFile: "/proc/\(shell)/task/\(shell)/children", encoding: .utf8)
            return try #require(children.split(separator: " ").compactMap { Int32($0) }.first)
        }

        /// The terminal's modes that `stty -a` saved in the file `name`, without the size: a test that resizes the
        /// terminal has changed that itself.
        static func modes(_ name: String, in directory: URL) throws -> String {
            try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
                .replacing(/rows \d+; columns \d+;/, with: "")
        }

        @Test("the panel shows the position, redraws in place as fixes come, follows a resize, and q restores the terminal")
        func panel() async throws {
            try await watching { tmux, _, directory in
                #expect(try await tmux.display("#{alternate_on}") == "1")
                // The satellites of gpsd's SKY reports (the log's GSV sentences): the table and the sky plot.
                let first = try await tmux.waitForScreen("the satellites") { screen in
                    guard let table = screen.firstIndex(where: { $0.hasPrefix("GNSS ") }), table + 1 < screen.count
                    else { return false }
                    return screen[table + 1].hasPrefix("GPS ") && Self.value("Latitude", on: screen) != nil
                }
                let table = try #require(first.firstIndex { $0.hasPrefix("GNSS ") })
                let used = first[(table + 1)...].prefix { $0.hasPrefix("GPS ") }.filter { $0.contains(" yes") }
                #expect(Self.value("Satellites", on: first)?.hasPrefix("\(used.count) used of") == true, "\(first)")
                #expect(first.contains { $0.contains(" W ") && $0.hasSuffix(" E") }, "a sky plot: \(first)")
                #expect(first.contains { $0.hasSuffix(" N") } && first.contains { $0.hasSuffix(" S") })
                #expect(first[0].hasPrefix("whereami --watch: gpsd at") && first[0].hasSuffix("q quits"), "\(first)")
                #expect(first[0].count == 120, "the title spans the width: \(first)")
                let time = try #require(Self.value("Time", on: first))
                #expect(Self.value("Longitude", on: first) != nil && Self.value("Fix", on: first)?.hasPrefix("3D") == true)
                #expect(Self.value("Satellites", on: first) != nil, "\(first)")

                // In place: a later fix changes the values, and every row keeps its place.
                let later = try await tmux.waitForScreen("a later fix") { Self.value("Time", on: $0) != time }
                #expect(later[0] == first[0])
                for label in ["Status", "Latitude", "Longitude", "Time", "Age", "Satellites"] {
                    #expect(first.firstIndex { $0.hasPrefix(label) } == later.firstIndex { $0.hasPrefix(label) }, "\(label)")
                }

                // Resized: the panel is laid out again for 80 × 24.
                try await tmux.command(["resize-window", "-t", tmux.session, "-x", "80", "-y", "24"])
                let small = try await tmux.waitForScreen("the panel laid out for 80 columns") {
                    $0.first?.count == 80 && $0.first?.hasSuffix("q quits") == true
                }
                #expect(small.count == 24 && small.allSatisfy { $0.count <= 80 })
                #expect(Self.value("Latitude", on: small) != nil)

                try await tmux.press("q")
                try await expectRestored(tmux, in: directory)
            }
        }

        @Test("the panel shows the heading gpsd reports from a dual-antenna receiver's $GPHDT, beside the course")
        func heading() async throws {
            // A 3D fix moving east (course 90°) each second, and a heading of 200° + the second: gpsd's ATT.
            let headings = (0..<600).map { 200.0 + Double($0 % 60) }
            let log: (URL) throws -> URL = { directory in
                let cycles = headings.indices.map { NMEA.Track.epoch($0) + NMEA.sentence(String(format: "GPHDT,%.1f,T", headings[$0])) }
                return try writeLog(cycles, named: "heading.nmea", in: directory)
            }
            try await watching(log: log) { tmux, _, directory in
                let screen = try await tmux.waitForScreen("a heading") { Self.value("Heading", on: $0).map { $0 != "n/a" } == true }
                let shown = try #require(Self.value("Heading", on: screen))
                let degrees = try #require(Double(shown.prefix { $0 != "°" }), "\(shown)")
                #expect(headings.contains(degrees), "\(shown)")
                #expect(shown.contains("mag)"), "gpsd's magnetic variation gives the magnetic heading: \(shown)")
                #expect(Self.value("Course", on: screen) == "90.0°", "the course over ground stays its own: \(screen)")
                try await tmux.press("q")
                try await expectRestored(tmux, in: directory)
            }
        }

        @Test("what the library logs (a signal gpsd passed that cannot be true) is on the panel's Log row, not across it")
        func logged() async throws {
            // The track, each epoch with a GSV whose first satellite's C/N0 is 300 dB-Hz: gpsd passes it on, the
            // library leaves it out and logs a warning once.
            let log: (URL) throws -> URL = { directory in
                let gsv = NMEA.sentence("GPGSV,1,1,04,04,45,100,300,05,40,090,41,09,30,200,35,12,20,300,30")
                return try writeLog((0..<600).map { NMEA.Track.epoch($0) + gsv }, named: "signal.nmea", in: directory)
            }
            try await watching(log: log) { tmux, _, directory in
                let screen = try await tmux.waitForScreen("the warning on the Log row") {
                    $0.count > 2 && $0[2].hasPrefix("Log ") && Self.value("Satellites", on: $0) != nil
                }
                #expect(screen[2].contains("warning: gpsd sent a satellite's signal beyond 0 to 254 dB-Hz (300.0)"),
                        "\(screen[2])")
                #expect(screen[3].hasPrefix("Latitude "), "the values in their place: \(screen)")
                #expect(!screen.contains { $0.contains("GPSDLocation:") }, "nothing written across the panel: \(screen)")
                try await tmux.press("q")
                try await expectRestored(tmux, in: directory)
                // Once the terminal is back, the message on standard error as the library's logger writes it.
                let after = try await tmux.screen()
                #expect(after.contains { $0.contains("warning GPSDLocation:") && $0.contains("beyond 0 to 254 dB-Hz") },
                        "\(after)")
            }
        }

        @Test("Ctrl-C ends the watch with the terminal as it was")
        func controlC() async throws {
            try await watching { tmux, _, directory in
                try await tmux.press("C-c")
                try await expectRestored(tmux, in: directory)
            }
        }

        @Test("Ctrl-Z suspends the watch with the terminal as it was; in the background it leaves the terminal alone; fg brings the panel back, kill ends it")
        func suspend() async throws {
            // dash, unlike bash, leaves the terminal as a stopped job left it: the modes seen while suspended are
            // whereami's doing.
            try await watching(shell: .dash) { tmux, _, directory in
                func saveModes(_ name: String) async throws {
                    try await tmux.type("stty -a > \(name); echo \(name)-\"\"saved")
                    try await tmux.waitForScreen("the shell's answer") { Tmux.answered("\(name)-saved", on: $0) }
                }
                try await tmux.press("C-z")
                // The shell says the job stopped, and goes on with the line: exit status 148 (SIGTSTP).
                let stopped = try await tmux.waitForScreen("the job stopped") { screen in
                    screen.contains { $0.hasSuffix("exit=148") } && screen.contains { $0.contains("Stopped") }
                }
                #expect(try await tmux.display("#{alternate_on}") == "0")
                #expect(Tmux.answered(Self.marker, on: stopped), "the normal screen is back: \(stopped)")
                try await saveModes("suspended")
                #expect(try Self.modes("suspended", in: directory) == (try Self.modes("before", in: directory)))

                // Continued in the background, it runs on without touching the terminal, and stops for nothing
                // (not at its next rounds, a tick apart, either).
                try await tmux.type("bg; jobs; sleep 2; jobs; echo jobs-\"\"listed")
                let jobs = try await tmux.waitForScreen("the jobs") { Tmux.answered("jobs-listed", on: $0) }
                #expect(jobs.count { $0.contains("Running") } == 2 && !jobs.contains { $0.contains("tty output") }, "\(jobs)")
                try await saveModes("background")
                #expect(try await tmux.display("#{alternate_on}") == "0")
                #expect(try Self.modes("background", in: directory) == (try Self.modes("before", in: directory)))

                try await tmux.type("fg; echo \"fg-exit=$?\"")
                try await tmux.waitForScreen("the panel again") { Self.value("Latitude", on: $0) != nil }
                #expect(try await tmux.display("#{alternate_on}") == "1")
                // Fixes go on being drawn, and Ctrl-Z, read without Enter (raw input again), suspends it again.
                let time = try #require(Self.value("Time", on: try await tmux.screen()))
                try await tmux.waitForScreen("a later fix") { Self.value("Time", on: $0) != time }
                try await tmux.press("C-z")
                try await tmux.waitForScreen("the job stopped again") { Tmux.answered("fg-exit=148", on: $0) }
                #expect(try await tmux.display("#{alternate_on}") == "0")
                try await saveModes("again")
                #expect(try Self.modes("again", in: directory) == (try Self.modes("before", in: directory)))

                // Stopped, SIGTERM then SIGCONT (what bash's kill does for a stopped job) end it, exit status 0:
                // dash's jobs says Done (Done(N) for another status) once it has seen the job end.
                try await tmux.type("kill %1; kill -CONT %1")
                var done = false
                for attempt in 1...100 where !done {
                    try await tmux.type("sleep 0.1; jobs; echo jobs-\"\"\(attempt)")
                    let screen = try await tmux.waitForScreen("the jobs") { Tmux.answered("jobs-\(attempt)", on: $0) }
                    done = screen.contains { $0.contains("Done") || $0.contains("Terminated") }
                }
                let ended = try await tmux.screen()
                #expect(ended.contains { $0.contains("Done ") }, "whereami's exit status 0: \(ended)")
                #expect(try await tmux.display("#{alternate_on}") == "0")
                try await saveModes("after")
                #expect(try Self.modes("after", in: directory) == (try Self.modes("before", in: directory)))
            }
        }

        @Test("stopped by SIGSTOP (bash puts its own modes back) and continued, the panel sets the terminal up again")
        func stoppedFromOutside() async throws {
            try await watching { tmux, _, directory in
                let whereami = try await Self.whereami(in: tmux)
                #expect(kill(whereami, SIGSTOP) == 0)
                // bash says so (on the alternate screen, which whereami had no chance to leave), with 128 + 19.
                try await tmux.waitForScreen("the job stopped") { $0.contains { $0.hasPrefix("exit=147") } }
                try await tmux.type("fg; echo \"exit=$?\"")
                try await tmux.waitForScreen("the panel again") { screen in
                    Self.value("Latitude", on: screen) != nil && !screen.contains { $0.contains("exit=147") }
                }
                // Raw input again: q, without Enter, ends it.
                try await tmux.press("q")
                try await expectRestored(tmux, in: directory)
            }
        }

        @Test("SIGTERM ends the watch with the terminal as it was")
        func terminate() async throws {
            try await watching { tmux, _, directory in
                let whereami = try await Self.whereami(in: tmux)
                #expect(kill(whereami, SIGTERM) == 0)
                try await expectRestored(tmux, in: directory)
            }
        }

        /// A crash that can be caught (SIGABRT, SIGSEGV) puts the terminal back before the process ends by it: the
        /// exit status is the signal's (128 + its number, as the shell says), the screen normal, the cursor shown,
        /// the modes as before. The backtracer is off, as where it is not installed: it would otherwise wait
        /// for a key on a terminal before the process ends.
        @Test("a crash (SIGABRT, SIGSEGV) or another signal that ends a process (SIGUSR1) ends the watch by it with the terminal as it was",
              arguments: [SIGABRT, SIGSEGV, SIGUSR1])
        func crash(signal: Int32) async throws {
            try await watching(environment: "SWIFT_BACKTRACE=enable=no ") { tmux, _, directory in
                #expect(try await tmux.display("#{cursor_flag}") == "0", "the panel hides the cursor")
                let whereami = try await Self.whereami(in: tmux)
                #expect(kill(whereami, signal) == 0)
                try await expectRestored(tmux, in: directory, status: 128 + signal)
            }
        }
    }
}

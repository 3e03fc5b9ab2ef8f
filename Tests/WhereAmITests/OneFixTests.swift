import Foundation
import GPSDLocation
import GPSDTestSupport
import Testing

extension WhereAmIProcessTests {
    /// One fix (no --follow): the receiver's first whole epoch, as --follow writes it, not its first report; with
    /// --max-age, gpsd's held fix when its age is known and small enough, and a line saying so when its age is not.
    /// A fake gpsd on a loopback port sends each epoch as gpsd 3.25 does: RMC's 2D fix, then GGA's 3D one.
    @Suite("whereami: one fix is a whole epoch", .timeLimit(.minutes(1)))
    struct OneFixTests {
        /// The first report of an epoch as gpsd sends it for RMC: a 2D fix without altitude.
        static func partial(_ second: Int) -> String {
            #"{"class":"TPV","device":"/dev/ttyUSB0","mode":2,"time":"\#(ReportLines.time(second))","ept":0.005,"#
                + #""lat":52.5,"lon":\#(13.4 + Double(second) * 0.0001),"track":90.0,"speed":7.0}"#
        }

        /// gpsd's answer to `?POLL;` at `polledAt` seconds after ``ReportLines/epoch``, holding epoch `second`'s fix.
        static func poll(holding second: Int, polledAt: Double) -> String {
            let time = GPSDTime.string(from: Date(timeIntervalSince1970: ReportLines.epoch + polledAt))!
            return #"{"class":"POLL","time":"\#(time)","active":1,"tpv":[\#(ReportLines.tpv(second: second))],"sky":[]}"#
        }

        /// Starts whereami with `arguments` against a fake gpsd, and answers its watch with the receiver: the client.
        private func start(_ arguments: [String], gpsd: FakeGPSD) async throws -> (CLIProcess, FakeGPSD.Client) {
            let process = try await CLIProcess.start(["127.0.0.1:\(gpsd.port)", "--format", "json"] + arguments)
            let client = await gpsd.nextClient()
            await client.waitUntilReceived { $0.contains("?WATCH=") }
            client.send(ReportLines.devices)
            return (process, client)
        }

        /// Sends epochs `seconds`, each as two reports, until the process has ended.
        private func sendEpochs(_ seconds: Range<Int>, to client: FakeGPSD.Client) {
            for second in seconds {
                client.send(Self.partial(second))
                client.send(ReportLines.tpv(second: second))   // GGA adds the altitude
            }
        }

        /// The one line of JSON whereami printed, checked to be epoch `second`'s whole record.
        private func expectWholeEpoch(_ result: CLIResult, second: Int, sourceLocation: SourceLocation = #_sourceLocation) throws {
            #expect(result.status == 0 && !result.endedBySignal, "\(result)", sourceLocation: sourceLocation)
            try #require(result.stdoutLines.count == 1, "one line: \(result)", sourceLocation: sourceLocation)
            let line = result.stdoutLines[0]
            #expect(line.contains(#""timestamp":"\#(ReportLines.time(second))""#), "epoch \(second): \(line)",
                    sourceLocation: sourceLocation)
            #expect(line.contains(#""altitude":40.25"#) && line.contains(#""fix":"3D""#) && line.contains(#""horizontalAccuracy":6.5"#),
                    "the epoch's most complete record, not its first report: \(line)", sourceLocation: sourceLocation)
        }

        @Test("one fix prints the first epoch whole, and says once what it waits for")
        func wholeEpoch() async throws {
            let gpsd = try FakeGPSD()
            defer { gpsd.stop() }
            let (process, client) = try await start([], gpsd: gpsd)
            // The epoch's end shows when the next begins (or, once epochs are alike, at its last report).
            sendEpochs(0..<3, to: client)
            let result = await process.finish()
            try expectWholeEpoch(result, second: 0)
            let waits = result.stderr.split(separator: "\n").filter { $0.contains("waiting for") }
            #expect(waits == ["whereami: waiting for a fix, the receiver's next complete one (up to 30.0 s)"],
                    "one line says what it waits for: \(result.stderr)")
        }

        @Test("--max-age: a live report that comes before gpsd's answer to the poll is waited on until its epoch is whole")
        func liveReportBeforeThePoll() async throws {
            let gpsd = try FakeGPSD()
            defer { gpsd.stop() }
            let (process, client) = try await start(["--max-age", "5", "-q"], gpsd: gpsd)
            await client.waitUntilReceived { $0.contains("?POLL;") }
            // The poll is never answered: the request takes the first report of epoch 0, which is young enough.
            sendEpochs(0..<3, to: client)
            try expectWholeEpoch(await process.finish(), second: 0)
        }

        @Test("--max-age: the fix gpsd holds, its age known by gpsd's clock, is printed without a live epoch")
        func heldFixOfKnownAge() async throws {
            let gpsd = try FakeGPSD()
            defer { gpsd.stop() }
            let (process, client) = try await start(["--max-age", "5", "-q"], gpsd: gpsd)
            await client.waitUntilReceived { $0.contains("?POLL;") }
            client.send(Self.poll(holding: 4, polledAt: 5))   // a second old by gpsd's clock
            let result = await process.finish()
            try expectWholeEpoch(result, second: 4)
        }

        @Test("--max-age: gpsd's fix of unknown age is said once on standard error, then a live epoch is printed whole")
        func heldFixOfUnknownAge() async throws {
            let gpsd = try FakeGPSD()
            defer { gpsd.stop() }
            let (process, client) = try await start(["--max-age", "5"], gpsd: gpsd)
            await client.waitUntilReceived { $0.contains("?POLL;") }
            // Two days after the fix by gpsd's clock: more than a day, so its age cannot be told.
            client.send(Self.poll(holding: 0, polledAt: 2 * 86_400))
            let said = await process.waitForOutput(onStandardError: true, timeout: .seconds(30)) { $0.contains("unknown age") }
            #expect(said, "says so while it waits: \(process.stderrSoFar)")
            sendEpochs(10..<13, to: client)
            let result = await process.finish()
            try expectWholeEpoch(result, second: 10)
            let lines = result.stderr.split(separator: "\n").filter { $0.contains("unknown age") }
            #expect(lines == ["whereami: the fix gpsd holds is of unknown age (its time is not one gpsd's clock vouches "
                              + "for), so --max-age cannot take it: waiting for the receiver's next complete fix"],
                    "once: \(result.stderr)")
        }
    }
}

import Foundation
@testable import GPSDCore
import GPSDLocation
import GPSDTestSupport
import Testing

/// A misbehaving peer on loopback in place of gpsd, through the real socket, reader thread and decoder: each bad
/// input is survived (never a crash, never a hang past the watchdog) and loses nothing that came with it.
@Suite("Fault injection", .timeLimit(.minutes(1)))
struct FaultInjectionTests {
    /// A manager on `server`, the fixes of one stream (unbounded) and its status stream.
    private struct Watch {
        let manager: LocationManager
        let gps: AsyncLocationManager
        let fixes: LocationUpdates
        let statuses: StatusUpdates

        init(_ server: GPSDServer, connectTimeout: Duration = .seconds(5), staleTimeout: Duration = .seconds(5)) {
            manager = LocationManager(source: GPSDSessionSource(server: server, connectTimeout: connectTimeout))
            manager.staleTimeout = staleTimeout
            manager.reconnectPolicy = ReconnectPolicy(initialDelay: .milliseconds(20), maximumDelay: .milliseconds(40))
            gps = AsyncLocationManager(manager: manager)
            statuses = gps.statusUpdates()
            fixes = gps.updates(bufferingPolicy: .unbounded)
        }

        /// Waits for a status that satisfies `condition`; returns the statuses seen up to it.
        func waitForStatus(_ condition: (LocationStatus) -> Bool) async -> [LocationStatus] {
            var seen: [LocationStatus] = []
            for await status in statuses {
                seen.append(status)
                if condition(status) { break }
            }
            return seen
        }
    }

    /// Connects a watch to a fake gpsd and returns the client once it watches.
    private func watching(_ gpsd: FakeGPSD, staleTimeout: Duration = .seconds(5)) async -> (Watch, FakeGPSD.Client) {
        let watch = Watch(gpsd.server, staleTimeout: staleTimeout)
        let client = await gpsd.nextClient()
        await client.waitUntilReceived { $0.contains("?WATCH=") }
        return (watch, client)
    }

    @Test func theFourImpossibleReportsOfTheIssueNeverReachAConsumer() async throws {
        let gpsd = try FakeGPSD()
        let (watch, client) = await watching(gpsd)
        client.send(ReportLines.tpv(second: 1, latitude: 91.5))
        client.send(ReportLines.tpv(second: 2, longitude: 200))
        client.send(ReportLines.tpv(second: 3, latitude: 1e308, longitude: 1e308))
        client.send(ReportLines.tpv(second: 4).replacingOccurrences(of: ReportLines.time(4), with: "2024-13-45T99:99:99Z"))
        client.send(ReportLines.tpv(second: 5))
        var fixes = watch.fixes.makeAsyncIterator()
        let fix = try #require(try await fixes.next())
        #expect(fix.timestamp == GPSDTime.date(from: ReportLines.time(5)), "the first possible fix, and nothing before it")
        let statistics = watch.manager.statistics
        #expect(statistics.rejectedFixes == 3)
        #expect(statistics.rejectedValues == 1, "the time")
        #expect(statistics.fixesWithoutTime == 1, "so that fix was held back")
        await watch.gps.stop()
    }

    @Test func garbageIsSkippedAndWhatFollowsArrives() async throws {
        let gpsd = try FakeGPSD()
        let (watch, client) = await watching(gpsd)
        client.send(#"{"class":"NOSUCHCLASS","x":1}"#)                       // an unknown class
        client.send(#"{"class":"TPV","device":"/dev/ttyUSB0","mode":3,"lat":"#)   // truncated
        client.send(#"{"class":"TPV","tag":""# + String(repeating: "x", count: 10_000) + #""}"#)   // past libgps's buffer
        client.send(String(repeating: "y", count: 100_000))                     // past ours
        client.sendRaw([0x00, 0xFF, 0xFE, 0x7B, 0x22, 0x80, 0x0A, 0x0D, 0x0A])   // binary noise, lines of it
        client.send(#"{"class":"TPV","lat":"NaN","lon":"abc","mode":"3"}"#)     // strings where numbers go
        client.send(ReportLines.tpv(second: 7))
        var fixes = watch.fixes.makeAsyncIterator()
        #expect(try await fixes.next()?.timestamp == GPSDTime.date(from: ReportLines.time(7)))
        // The truncated line, the one past our limit and the noise are no reports (libgps itself takes the unknown
        // class, and the TPV with strings for numbers as one without a fix).
        #expect(watch.manager.statistics.skippedLines >= 3, "\(watch.manager.statistics)")
        await watch.gps.stop()
    }

    @Test func aPeerThatTricklesGoesStaleAndItsLineStillArrives() async throws {
        let gpsd = try FakeGPSD()
        let (watch, client) = await watching(gpsd, staleTimeout: .milliseconds(300))
        let line = Array((ReportLines.tpv(second: 8) + "\n").utf8)
        let trickling = Task { await client.trickle(Array(line.prefix(12)), every: .milliseconds(100)) }
        let seen = await watch.waitForStatus { $0.name == "stale" }
        #expect(seen.last.map(\.name) == "stale", "bytes that make no report are silence: \(seen)")
        await trickling.value
        client.sendRaw(Array(line.dropFirst(12)))
        var fixes = watch.fixes.makeAsyncIterator()
        #expect(try await fixes.next()?.timestamp == GPSDTime.date(from: ReportLines.time(8)))
        await watch.gps.stop()
    }

    /// gpsd greets every client at once: a peer that does not within the connect timeout has not connected, and
    /// is tried again (it may be a gpsd stopped for a while). One fix fails with it: NotGPSDTests.
    @Test func aPeerThatAcceptsAndSaysNothingIsNotConnectedAndIsRetried() async throws {
        let gpsd = try FakeGPSD(greeting: [])
        let watch = Watch(gpsd.server, connectTimeout: .milliseconds(200))
        let seen = await watch.waitForStatus { status in
            if case .connecting(let attempt) = status { attempt >= 2 } else { false }
        }
        let retried = seen.contains { status in
            guard case .reconnecting(_, _, let error) = status else { return false }
            return error.code == .gpsdUnavailable && error.message.contains("sent no greeting within 0.2 s")
        }
        #expect(retried, "\(seen)")
        #expect(!seen.contains { $0.name == "connected" }, "never connected: \(seen)")
        for _ in 1...2 { _ = await gpsd.nextClient() }   // a second connection came
        await watch.gps.stop()
    }

    @Test func aPortNobodyAnswersTimesOutTheConnect() async throws {
        let port = try UnansweredPort()
        let request = AsyncLocationManager(
            manager: LocationManager(source: GPSDSessionSource(server: port.server, connectTimeout: .milliseconds(200))))
        let error = await #expect(throws: LocationError.self) { try await request.requestLocation(timeout: .seconds(30)) }
        #expect(error?.code == .gpsdUnavailable)
        #expect(error?.errorNumber == ETIMEDOUT, "\(String(describing: error))")

        let watch = Watch(port.server, connectTimeout: .milliseconds(200))
        let seen = await watch.waitForStatus { status in
            if case .connecting(let attempt) = status { attempt >= 2 } else { false }
        }
        #expect(seen.map(\.name).contains("reconnecting"), "a stream keeps trying: \(seen)")
        await watch.gps.stop()
    }

    @Test func whatWasSentBeforeTheConnectionClosedArrivesFirst() async throws {
        let gpsd = try FakeGPSD()
        let (watch, client) = await watching(gpsd)
        client.send(ReportLines.tpv(second: 1))
        client.send(ReportLines.tpv(second: 2))
        client.sendRaw(Array(ReportLines.tpv(second: 3).utf8))   // its newline never came
        client.close()
        // The manager connects again: it has handled the end of the first connection. (Waiting for the
        // reconnecting status instead could miss it: a status stream keeps the newest, and under load the next
        // attempt's may come first.)
        _ = await gpsd.nextClient()
        var fixes = watch.fixes.makeAsyncIterator()
        for second in 1...3 {
            #expect(try await fixes.next()?.timestamp == GPSDTime.date(from: ReportLines.time(second)))
        }
        await watch.gps.stop()
    }
}

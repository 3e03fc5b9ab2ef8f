import Foundation
import GPSDLocation
import GPSDTestSupport
import MetricsTestKit
import Testing

/// ``LocationManager/health`` and its metrics, on a scripted source and the manual clock: every duration is exact.
@Suite("LocationManager: health and its metrics", .timeLimit(.minutes(1)))
struct HealthTests {
    let source = ScriptedSource()
    let clock = ManualManagerClock()
    let metrics = TestMetrics()
    let manager: LocationManager
    let lost = LocationError(.connectionLost, "connection to gpsd lost: gpsd closed the connection")
    static let dimensions = [("receiver", "test")]

    init() {
        manager = LocationManager(
            source: source, clock: clock, jitterSeed: 1,
            metrics: .init(factory: metrics, dimensions: Self.dimensions))
        manager.reconnectPolicy = ReconnectPolicy(jitter: 0)
    }

    /// 2 s stopped, 1 s connecting, 1 s connected, fixes at 4…8 s, a lost connection at 9 s, 0.25 s reconnecting,
    /// connecting again for 0.75 s, fixes at 10…12 s, then silence: stale at 17 s, read at 21 s.
    func script() {
        clock.advance(by: .seconds(2))
        manager.startUpdatingLocation()
        clock.advance(by: .seconds(1))
        source.send(.connected)
        clock.advance(by: .milliseconds(500))
        source.send(.skippedLine)
        clock.advance(by: .milliseconds(500))
        for second in 4...8 {
            source.send(Location.sample(second: second))
            // A later report of the same epoch that adds nothing, and one that adds a value: one fix each epoch.
            source.send(Location.sample(second: second))
            var completed = Location.sample(second: second)
            completed.climb = 0.5
            source.send(completed)
            clock.advance(by: .seconds(1))
        }
        source.send(.rejected(ReportProblem(.latitude, "91.5")))
        source.send(.rejected(ReportProblem(.altitude, "1e+308")))
        source.send(.failed(lost))                    // at 9 s
        clock.advance(by: .milliseconds(250))         // reconnecting 0.25 s
        clock.advance(by: .milliseconds(750))         // connecting 0.75 s
        source.send(.connected)
        for second in 10...12 {
            source.send(Location.sample(second: second))
            clock.advance(by: .seconds(1))
        }
        // Silent from 12 s: the watchdog finds it stale at 17 s. (Second by second: a timer runs at the time it
        // is due only if the clock stops there.)
        for _ in 13..<21 { clock.advance(by: .seconds(1)) }
    }

    /// One outage is one reconnection, however many attempts gpsd refused meanwhile; a first connection refused is
    /// none.
    @Test func anOutageIsOneReconnectionWhateverItsAttempts() {
        let refused = LocationError(.gpsdUnavailable, "cannot connect to gpsd: connection refused")
        manager.startUpdatingLocation()
        source.send(.failed(refused))                 // the first attempt refused: no reconnection yet
        clock.advance(by: .seconds(60))
        source.send(.connected)
        source.send(Location.sample(second: 1))
        #expect(manager.health.reconnects == 0)
        source.send(.failed(lost))
        for _ in 0..<3 {                              // gpsd down: three attempts refused
            clock.advance(by: .seconds(60))
            source.send(.failed(refused))
        }
        clock.advance(by: .seconds(60))
        source.send(.connected)
        source.send(Location.sample(second: 2))
        #expect(manager.health.reconnects == 1)
        source.send(.failed(lost))
        #expect(manager.health.reconnects == 2, "a second outage")
        manager.stopUpdatingLocation()
    }

    @Test func countsReconnectsFixesAndDropsAndTimesEachStatus() {
        #expect(manager.health.fixes == 0 && manager.health.reconnects == 0)
        script()
        let health = manager.health
        #expect(health.reconnects == 1)
        #expect(health.fixes == 8, "one per epoch: 5, then 3 after the reconnection")
        #expect(health.statistics.skippedLines == 1 && health.statistics.rejectedFixes == 1)
        #expect(health.statistics.rejectedValues == 1)
        #expect(health.drops == 2)
        var expected = StatusDurations()
        expected.stopped = .seconds(2)
        expected.connecting = .seconds(1) + .milliseconds(750)
        expected.connected = .seconds(1)
        expected.fix = .seconds(5) + .seconds(7)      // 4…9 s, then 10…17 s, when the watchdog finds it stale
        expected.reconnecting = .milliseconds(250)
        expected.stale = .seconds(4)
        #expect(health.timeInStatus == expected)
        #expect(health.timeInStatus.total == .seconds(21), "every instant in one status")
        #expect(health.timeInStatus[manager.status] == .seconds(4))
        #expect(manager.status == .stale(silentFor: .seconds(5)))
    }

    @Test func theCurrentStatusIsTimedUpToTheRead() {
        manager.startUpdatingLocation()
        source.send(.connected)
        clock.advance(by: .milliseconds(1_500))
        #expect(manager.health.timeInStatus.connected == .milliseconds(1_500))
        clock.advance(by: .milliseconds(500))
        #expect(manager.health.timeInStatus.connected == .seconds(2), "no input between: the read times it")
    }

    @Test func theLastFixAgeGrowsWithTimeAndIsNilBeforeTheFirst() throws {
        manager.startUpdatingLocation()
        source.send(.connected)
        #expect(manager.health.lastFixAge == nil)
        clock.advance(by: .seconds(1))
        source.send(Location.sample(second: 1))
        let first = try #require(manager.health.lastFixAge)
        clock.advance(by: .seconds(3))
        let later = try #require(manager.health.lastFixAge)
        #expect(later - first == .seconds(3))
        source.send(.failed(lost))
        #expect(manager.health.lastFixAge == later, "the fix outlives its connection, and its age goes on")
    }

    @Test func fixesPerSecondIsKnownOneWindowInAndCountsTheWindowBeforeTheCurrentSecond() throws {
        manager.startUpdatingLocation()
        source.send(.connected)
        // Two fixes a second for 12 s.
        for second in 0..<12 {
            #expect(second >= 10 || manager.health.fixesPerSecond == nil, "not yet one window in (\(second) s)")
            source.send(Location.sample(second: 2 * second))
            clock.advance(by: .milliseconds(500))
            source.send(Location.sample(second: 2 * second + 1))
            clock.advance(by: .milliseconds(500))
        }
        #expect(try #require(manager.health.fixesPerSecond) == 2)
        // Silent for 4 s: six of the window's ten seconds had fixes.
        clock.advance(by: .seconds(4))
        #expect(try #require(manager.health.fixesPerSecond) == 1.2)
        clock.advance(by: .seconds(10))
        #expect(manager.health.fixesPerSecond == 0)
    }

    @Test func theMetricsSayWhatTheValueSays() throws {
        script()
        let health = manager.health
        let dimensions = Self.dimensions
        #expect(try metrics.expectCounter("gpsd_location_reconnects_total", dimensions).totalValue == 1)
        #expect(try metrics.expectCounter("gpsd_location_fixes_total", dimensions).totalValue == Int64(health.fixes))
        func dropped(_ reason: String) throws -> Int64 {
            try metrics.expectCounter("gpsd_location_dropped_total", dimensions + [("reason", reason)]).totalValue
        }
        #expect(try dropped("skipped_line") == 1)
        #expect(try dropped("rejected_fix") == 1)
        #expect(try dropped("rejected_value") == 1)
        #expect(try dropped("fix_without_time") == 0)
        // TestMetrics counts a floating-point counter in whole units: every duration here is whole seconds, but for
        // the stale status's, which the read times and the metrics do not (no input since it began).
        func seconds(_ status: String) throws -> Int64 {
            try metrics.expectCounter("gpsd_location_status_seconds_total", dimensions + [("status", status)])
                .totalValue
        }
        #expect(try seconds("stopped") == 2)
        #expect(try seconds("connected") == 1)
        #expect(try seconds("fix") == 12)
        #expect(try seconds("connecting") == 1, "1.75 s, the fraction kept for the next")
        #expect(try seconds("stale") == 0, "no input since it began")
        func shows(_ status: String) throws -> Double? {
            try metrics.expectGauge("gpsd_location_status", dimensions + [("status", status)]).lastValue
        }
        #expect(try shows("stale") == 1)
        #expect(try shows("fix") == 0 && shows("reconnecting") == 0)
        // The newest fix (12 s) was measured 12 s after the manual clock's wall-clock origin; its age as of the
        // watchdog's decision, 5 s after it.
        let timestamp = try metrics.expectGauge("gpsd_location_last_fix_timestamp_seconds", dimensions)
        #expect(timestamp.lastValue == 1_748_779_212)
        let age = try metrics.expectGauge("gpsd_location_last_fix_age_seconds", dimensions)
        #expect(age.lastValue == 5)
    }

    @Test func whatAStreamsBufferDropsIsCountedAsDropped() async throws {
        let gps = AsyncLocationManager(manager: manager)
        let updates = gps.updates(bufferingPolicy: .bufferingNewest(4))
        source.send(.connected)
        for second in 0..<10 { source.send(Location.sample(second: second)) }
        #expect(manager.health.streamDrops == 6, "ten fixes, four kept")
        #expect(manager.health.drops == 6)
        #expect(gps.health == manager.health, "the async manager's is the manager's, read without a task hop")
        #expect(try metrics.expectCounter("gpsd_location_dropped_total", Self.dimensions + [("reason", "stream_buffer")])
            .totalValue == 6)
        var taken = 0
        for try await _ in updates {
            taken += 1
            if taken == 4 { break }
        }
        await gps.stop()
        #expect(manager.health.streamDrops == 6 && manager.health.fixes == 10)
    }

    @Test func theDefaultDimensionNamesTheSource() throws {
        let metrics = TestMetrics()
        let server = try GPSDServer(parsing: "127.0.0.1:29470")
        let manager = LocationManager(
            source: ScriptedSource(), server: server, clock: ManualManagerClock(), metrics: .init(factory: metrics))
        _ = manager.health
        #expect(try metrics.expectCounter("gpsd_location_fixes_total", [("server", "127.0.0.1:29470")]).totalValue == 0)
        let replay = LocationManager(
            recording: Array("{\"class\":\"VERSION\"}\n".utf8), named: "drive.json", pace: .asFastAsPossible,
            metrics: .init(factory: metrics))
        #expect(try metrics.expectCounter("gpsd_location_fixes_total", [("recording", "drive.json")]).totalValue == 0)
        _ = replay
    }

    @Test func disabledMetricsAreNotMadeAndHealthIsKeptAnyway() {
        let metrics = TestMetrics()
        var options = LocationManager.MetricsOptions.disabled
        options.factory = metrics
        let source = ScriptedSource()
        let manager = LocationManager(source: source, clock: ManualManagerClock(), metrics: options)
        manager.startUpdatingLocation()
        source.send(.connected)
        source.send(Location.sample(second: 1))
        #expect(manager.health.fixes == 1)
        #expect(metrics.counters.isEmpty && metrics.recorders.isEmpty)
    }
}

import Foundation
import GPSDLocation
import GPSDTestSupport
import MetricsTestKit
import Testing

/// ``LocationManager/health`` and its swift-metrics metrics against a real gpsd that is killed and started again,
/// read back through MetricsTestKit's backend.
@Suite("Health through swift-metrics, from a real gpsd", .enabled(if: GPSFake.isAvailable), .serialized, .liveSuite,
       .timeLimit(.minutes(3)))
struct LiveHealthTests {
    static let epochsPerSegment = 10

    @Test("a gpsd restart is one reconnection; every epoch is one fix; the metrics say what the value says")
    func restartIsCountedAndFixesToo() async throws {
        let port = freeLoopbackPort()
        let metrics = TestMetrics()
        let server = GPSDServer(host: "127.0.0.1", port: port)
        let manager = LocationManager(server: server, metrics: .init(factory: metrics))
        let gps = AsyncLocationManager(manager: manager)
        let started = Date()
        var fixes = gps.updates(bufferingPolicy: .unbounded).makeAsyncIterator()
        var epochs = Set<Date>()
        try await withScratchDirectory("health") { directory in
            for segment in 0...1 {
                let first = segment * Self.epochsPerSegment
                let log = try writeLog((first..<(first + Self.epochsPerSegment)).map { NMEA.Track.epoch($0) },
                                       named: "segment\(segment).nmea", in: directory)
                let segmentStart = NMEA.Track.time(first)
                try await GPSFake.run(logs: [log], cycle: 0.02, once: true, lingerAfterEnd: 60, waitForClient: true,
                                      port: port) { _ in
                    // Every epoch of this gpsd's log, then it is killed.
                    var fromThisGPSD = Set<Date>()
                    while fromThisGPSD.count < Self.epochsPerSegment {
                        guard let fix = try await fixes.next() else { return }
                        epochs.insert(fix.timestamp)
                        if fix.timestamp >= segmentStart { fromThisGPSD.insert(fix.timestamp) }
                    }
                    // Stopped before the last gpsd is killed: only the first kill is a lost connection.
                    if segment == 1 { await gps.stop() }
                }
            }
        }
        await gps.stop()
        let health = manager.health
        let dimensions = [("server", server.description)]

        #expect(epochs.count == 2 * Self.epochsPerSegment)
        #expect(health.fixes == epochs.count, "one fix an epoch, however many TPVs gpsd sent of it")
        #expect(health.reconnects == 1, "the kill is one reconnection, however many attempts it took")
        #expect(try metrics.expectCounter("gpsd_location_fixes_total", dimensions).totalValue == Int64(health.fixes))
        #expect(try metrics.expectCounter("gpsd_location_reconnects_total", dimensions).totalValue
                == Int64(health.reconnects))
        #expect(try metrics.expectGauge("gpsd_location_status", dimensions + [("status", "stopped")]).lastValue == 1)
        #expect(try metrics.expectGauge("gpsd_location_status", dimensions + [("status", "fix")]).lastValue == 0)
        #expect(health.timeInStatus.fix > .zero && health.timeInStatus.reconnecting > .zero)
        // When the newest fix was measured, on the wall clock: about now (its delay is estimated), not at the log's
        // own times, which are of 2025.
        let measured = try #require(try metrics.expectGauge("gpsd_location_last_fix_timestamp_seconds", dimensions)
            .lastValue)
        #expect(measured >= started.timeIntervalSince1970 - 60 && measured <= Date().timeIntervalSince1970,
                "\(measured) from \(started.timeIntervalSince1970)")
        print("health after a restart: \(health)")
    }
}

import FleetCore
import FleetTestSupport
import FleetUplink
import Foundation
import GPSDLocation
import MetricsTestKit
import Testing

/// The queue's disk full (a tmpfs too small, then given room): every fix given is kept, in memory while it cannot
/// be written, and written once there is room; the failures are counted. It used to drop them with one log line
/// each write (16,831 of 20,000 when the issue was filed).
@Suite(.enabled(if: TmpfsMount.isPossible, "mounting a tmpfs needs root"), .timeLimit(.minutes(5)))
struct QueueDiskFullTests {
    @Test func aFullDiskKeepsTheFixesInMemoryAndWritesThemOnceThereIsRoom() async throws {
        let disk = try TmpfsMount(size: "256k")
        defer { disk.unmount() }
        let vehicle = try VehicleID("u-full")
        let queue = try FixQueue(directory: disk.directory.appendingPathComponent("q").path, vehicle: vehicle)
        let metrics = TestMetrics()
        // Nobody listens: every fix stays in the queue.
        let uplink = try Uplink(configuration: UplinkConfiguration(vehicle: vehicle, broker: BrokerAddress(
            host: "127.0.0.1", port: freeLoopbackPort())), queue: queue, metricsFactory: metrics)
        uplink.start()
        let count = 5000
        for chunk in stride(from: 0, to: count, by: 1000) {
            for epoch in chunk..<chunk + 1000 { uplink.enqueue(FleetFaultTests.fix(epoch: epoch)) }
            await uplink.flushQueue()
        }
        let full = uplink.statistics
        #expect(full.queueWriteFailures > 0, "the disk filled")
        #expect(full.held > 0 && full.held + full.queue.depth == count, "\(full)")
        #expect(try metrics.expectGauge("fleet_uplink_held_fixes", [("vehicle", "u-full")]).lastValue == Double(full.held))
        try disk.resize(to: "128m")
        try await waitUntil { uplink.statistics.held == 0 }
        await uplink.stop()
        #expect(queue.statistics.depth == count, "every fix given is in the queue")
        #expect(queue.statistics.lastSeq == Int64(count))
        #expect(try queue.batch(after: 0, limit: count + 1).map(\.seq) == (1...Int64(count)).map { $0 })
        #expect(uplink.statistics.lost == 0)
        try queue.close()
    }

    func waitUntil(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(120)
        while !condition() {
            guard ContinuousClock.now < deadline else { throw ServerError("condition not met within 120 s") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}

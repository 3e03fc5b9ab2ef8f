import Foundation
import GPSDLocation
import GPSDTestSupport
import Testing

/// A million reports through the live path (a socket, the reader thread, libgps, the manager) into `updates()`:
/// the resident memory of the process may grow by no more than a few MiB once the path is warm.
@Suite("Soak", .serialized, .liveSuite, .timeLimit(.minutes(10)))
struct SoakTests {
    /// `GPSDLOCATION_SOAK_REPORTS` changes how many (to try a longer soak by hand).
    static let reports = ProcessInfo.processInfo.environment["GPSDLOCATION_SOAK_REPORTS"].flatMap(Int.init) ?? 1_000_000
    static let warmUp = 50_000
    static let allowedGrowth = 4 * 1024 * 1024

    @Test func aMillionReportsThroughUpdatesKeepMemoryFlat() async throws {
        let gpsd = try FakeGPSD()
        let manager = LocationManager(source: GPSDSessionSource(server: gpsd.server))
        let gps = AsyncLocationManager(manager: manager)
        let updates = gps.updates(bufferingPolicy: .bufferingNewest(64))
        let client = await gpsd.nextClient()
        await client.waitUntilReceived { $0.contains("?WATCH=") }

        // One report a cycle, every cycle a new time; sent a batch at a time on a thread of the fake's own.
        let total = Self.reports
        let sending = Task {
            await onThread {
                var second = 0
                while second < total {
                    var batch: [UInt8] = []
                    for _ in 0..<min(1_000, total - second) {
                        second += 1
                        batch += Array((ReportLines.tpv(second: second, longitude: 13.4) + "\n").utf8)
                    }
                    client.sendRaw(batch)
                }
            }
        }
        var received = 0
        var warmResident = 0
        let last = GPSDTime.date(from: ReportLines.time(total))
        for try await fix in updates {
            received += 1
            // Counted by what the manager handled, taken or dropped: a consumer kept waiting may take few.
            if warmResident == 0, received + updates.droppedCount >= Self.warmUp { warmResident = Self.residentBytes() }
            if fix.timestamp == last { break }
        }
        await sending.value
        let endResident = Self.residentBytes()
        let growth = endResident - warmResident
        print("soak: \(total) reports, \(received) taken by the consumer (\(updates.droppedCount) dropped by its buffer), "
              + "resident \(warmResident / 1024) KiB after \(Self.warmUp), \(endResident / 1024) KiB at the end: "
              + "grew \(growth / 1024) KiB")
        #expect(received + updates.droppedCount == total, "every report became a fix, taken or dropped")
        #expect(growth < Self.allowedGrowth, "grew \(growth / 1024) KiB")
        await gps.stop()
    }

    /// The process's resident memory (`VmRSS` in /proc/self/status).
    static func residentBytes() -> Int {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
    }
}

/// Runs blocking `body` on a thread of its own and awaits it, off Swift's cooperative pool.
func onThread(_ body: @escaping @Sendable () -> Void) async {
    await withCheckedContinuation { continuation in
        Thread.detachNewThread {
            body()
            continuation.resume()
        }
    }
}

import Foundation
import GPSDLocation
import GPSDTestSupport
import Testing

/// The status a delegate follows, from a real gpsd playing a log to its end.
@Suite("Status from a real gpsd", .enabled(if: GPSFake.isAvailable), .timeLimit(.minutes(1)))
struct LiveStatusTests {
    @Test("fixes, a stretch without, fixes again, the log's end: fix, fix lost once, fix, receiver gone, reconnecting")
    func aLogToItsEnd() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("status-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let start = Date(timeIntervalSince1970: 1_748_779_200)
        let text = (0..<15).map { second -> String in
            let time = start.addingTimeInterval(Double(second))
            return (5..<10).contains(second) ? NMEA.noFixEpoch(time: time)
                : NMEA.epoch(time: time, latitude: 52.5, longitude: 13.4 + Double(second) * 0.0001)
        }.joined()
        let log = directory.appendingPathComponent("fix-nofix-fix.nmea")
        try Data(text.utf8).write(to: log)

        try await GPSFake.run(logs: [log], cycle: 0.02, once: true, lingerAfterEnd: 1, waitForClient: true) { fake in
            let manager = LocationManager(server: try GPSDServer(parsing: fake.server))
            let delegate = StreamingDelegate()
            manager.delegate = delegate
            manager.startUpdatingLocation()
            let (statuses, locations, error) = await delegate.collectStatuses { $0.caseName == "reconnecting" }
            manager.stopUpdatingLocation()
            #expect(error == nil)
            #expect(locations.count >= 10, "\(locations.count) fixes")
            // Without the waiting the gate's empty DEVICES causes, and the repeats of a state.
            var names: [String] = []
            for name in statuses.map(\.caseName) where name != "noDevice" && name != "waitingForFix" && names.last != name {
                names.append(name)
            }
            #expect(names == ["connecting", "connected", "fix", "fixLost", "fix", "deviceGone", "reconnecting"],
                    "\(statuses.map(\.description))")
            #expect(statuses.contains(.deviceGone(device: statuses.compactMap { status -> String? in
                if case .deviceGone(let device) = status { device } else { nil }
            }.first)), "names the receiver")
        }
    }
}

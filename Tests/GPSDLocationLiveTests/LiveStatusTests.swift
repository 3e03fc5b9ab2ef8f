import Foundation
import GPSDLocation
import GPSDTestSupport
import Testing

/// The status a delegate follows, from a real gpsd playing a log to its end.
@Suite("Status from a real gpsd", .enabled(if: GPSFake.isAvailable), .serialized, .liveSuite, .timeLimit(.minutes(1)))
struct LiveStatusTests {
    @Test("fixes, a stretch without, fixes again, the log's end: fix, fix lost once, fix, receiver gone, reconnecting")
    func aLogToItsEnd() async throws {
        let cycles = (0..<15).map { NMEA.Track.epoch($0, noFix: (5..<10).contains($0)) }
        try await withScratchDirectory { directory in
            let log = try writeLog(cycles, named: "fix-nofix-fix.nmea", in: directory)
            try await GPSFake.run(logs: [log], cycle: 0.02, once: true, lingerAfterEnd: 1, waitForClient: true) { fake in
                let manager = LocationManager(server: try GPSDServer(parsing: fake.server))
                let delegate = StreamingDelegate()
                manager.delegate = delegate
                manager.startUpdatingLocation()
                let (statuses, locations, error) = await delegate.collectStatuses { $0.name == "reconnecting" }
                manager.stopUpdatingLocation()
                #expect(error == nil)
                #expect(locations.count >= 10, "\(locations.count) fixes")
                // Without the waiting the gate's empty DEVICES causes, and the repeats of a state.
                var names: [String] = []
                for name in statuses.map(\.name) where name != "noDevice" && name != "waitingForFix" && names.last != name {
                    names.append(name)
                }
                #expect(names == ["connecting", "connected", "fix", "fixLost", "fix", "deviceGone", "reconnecting"],
                        "\(statuses.map(\.description))")
                let gone = statuses.compactMap { status -> String?? in
                    if case .deviceGone(let device) = status { device } else { nil }
                }
                #expect(gone.count == 1 && gone[0]?.isEmpty == false, "names the receiver: \(gone)")
            }
        }
    }
}

/// A gpsd stopped with SIGSTOP keeps its connection open and says nothing: the watchdog's case.
@Suite("A silent gpsd", .enabled(if: GPSFake.isAvailable), .serialized, .liveSuite, .timeLimit(.minutes(1)))
struct LiveStaleTests {
    @Test("gpsd stopped mid-stream: stale once, no error, the last fix ages; resumed: fixes again, without reconnecting")
    func suspendedGPSD() async throws {
        try await withUpdatingManager { fake, manager, delegate in
            // Until the 3D fix: gpsd 3.25+ reports the epoch's RMC (2D) before its GGA (3D), a status of its own.
            let before = await delegate.collectStatuses {
                if case .fix(.threeDimensional, _) = $0 { true } else { false }
            }
            #expect(before.error == nil)
            fake.suspend()
            let silent = await delegate.collectStatuses { $0.name == "stale" }
            let ageWhenStale = manager.location?.age
            let resumed = ContinuousClock.now
            fake.resume()
            let after = await delegate.collectStatuses { $0.name == "fix" }

            #expect(silent.error == nil && after.error == nil, "silence is a status, not an error")
            #expect(silent.statuses.map(\.name) == ["stale"], "\(silent.statuses)")
            if case .stale(let silence)? = silent.statuses.last {
                #expect(silence >= .seconds(1), "reported after the stale timeout: \(silence)")
            }
            #expect(ageWhenStale.map { $0 >= .seconds(1) } == true, "the last fix aged: \(ageWhenStale as Any)")
            #expect(after.statuses.map(\.name) == ["fix"], "the same connection goes on: \(after.statuses)")
            // The status may come with a report that only ends the silence (a repeat the manager drops): the
            // first fix delivered after it is new.
            var fresh = after.locations.first
            if fresh == nil { fresh = await delegate.nextLocation() }
            #expect(fresh?.arrival.map { $0.instant > resumed } == true, "a fix that came after the resume")
        }
    }
}

/// A receiver removed through gpsd's control socket, as unplugging it would, then added back.
@Suite("A receiver removed and added back", .enabled(if: GPSFake.isAvailable), .serialized, .liveSuite,
       .timeLimit(.minutes(1)))
struct LiveReceiverGoneTests {
    @Test("receiver gone stays past the stale timeout until the receiver is added back, and a request's timeout names it")
    func receiverGoneStaysUntilItComesBack() async throws {
        try await withUpdatingManager(requestTimeout: .seconds(3)) { fake, manager, delegate in
            let before = await delegate.collectStatuses { $0.name == "fix" }
            #expect(before.error == nil)
            var device = before.locations.last?.device ?? manager.location?.device
            if device == nil { device = await delegate.nextLocation()?.device ?? nil }
            let receiver = try #require(device, "the fixes name their receiver")

            try fake.removeDevice(receiver)
            let gone = await delegate.collectStatuses { $0.name == "deviceGone" }
            #expect(gone.error == nil && gone.statuses.last == .deviceGone(device: receiver), "\(gone.statuses)")

            // A request waits out its 3 s, three times the stale timeout: the status stays, and the timeout says it.
            manager.requestLocation()
            let waiting = await delegate.collectStatuses { _ in false }
            let failure = try #require(waiting.error)
            #expect(waiting.statuses.isEmpty, "no `no report for 1 s` while the receiver is gone: \(waiting.statuses)")
            #expect(failure.status == .deviceGone(device: receiver), "\(failure)")
            #expect(failure.message.hasSuffix("receiver gone (\(receiver))"), "\(failure.message)")
            #expect(manager.status == .deviceGone(device: receiver))

            try fake.addDevice(receiver)
            let back = await delegate.collectStatuses { $0.name == "fix" }
            #expect(back.error == nil)
            #expect(!back.statuses.contains { $0.name == "stale" }, "\(back.statuses)")
            #expect(back.statuses.last?.name == "fix", "fixes again once it is back: \(back.statuses)")
        }
    }
}

/// Runs `body` with a manager streaming fixes to a ``StreamingDelegate`` from a real gpsd that plays 600 epochs of a
/// 1 Hz receiver fast (gpsfake at 0.05 s a sentence), with a stale timeout of 1 s; updates stop when `body` returns.
func withUpdatingManager(
    requestTimeout: Duration? = nil, _ body: (GPSFake, LocationManager, StreamingDelegate) async throws -> Void
) async throws {
    let cycles = (0..<600).map { NMEA.Track.epoch($0) }
    try await withScratchDirectory { directory in
        let log = try writeLog(cycles, named: "long.nmea", in: directory)
        try await GPSFake.run(logs: [log], cycle: 0.05, once: true, lingerAfterEnd: 60, waitForClient: true) { fake in
            let manager = LocationManager(server: try GPSDServer(parsing: fake.server))
            manager.staleTimeout = .seconds(1)
            if let requestTimeout { manager.requestTimeout = requestTimeout }
            let delegate = StreamingDelegate()
            manager.delegate = delegate
            manager.startUpdatingLocation()
            defer { manager.stopUpdatingLocation() }
            try await body(fake, manager, delegate)
        }
    }
}

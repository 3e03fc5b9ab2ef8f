import Foundation
import GPSDLocation
import GPSDTestSupport
import Testing

/// `LocationManager` against a real gpsd, fed NMEA by gpsfake.
@Suite("LocationManager against a real gpsd", .enabled(if: GPSFake.isAvailable), .serialized, .liveSuite, .timeLimit(.minutes(1)))
struct LiveGPSDTests {
    /// Starts updates from a gpsfake playing `log` once from its first sentence; returns what the delegate
    /// received up to the epoch `until` (or the error that ended the run). gpsd stays up after the log (it is
    /// stopped when the body returns), so however late the last epoch reaches the client, it does.
    private func run(
        _ log: String, until lastTime: Date?, cycle: Double = 0.01, configure: (LocationManager) -> Void = { _ in }
    ) async throws -> (locations: [Location], error: LocationError?, manager: LocationManager) {
        return try await GPSFake.run(logs: [Fixtures.url(log)], cycle: cycle, once: true, lingerAfterEnd: 60,
                                     waitForClient: true) { fake in
            let manager = LocationManager(server: try GPSDServer(parsing: fake.server))
            let delegate = StreamingDelegate()
            manager.delegate = delegate
            configure(manager)
            manager.startUpdatingLocation()
            let (locations, error) = await delegate.collect(until: lastTime)
            manager.stopUpdatingLocation()
            return (locations, error, manager)
        }
    }

    // gpsd 3.25 and later send an epoch's TPV after each sentence (RMC, then GGA adds to it), where 3.22 sent
    // the epoch once; a repeat of an epoch is passed on when it adds a value (`EpochDelivery.asReported`).
    @Test("every epoch of the moving track reaches the delegate in order, with its values; a repeat adds a value")
    func movingTrack() async throws {
        let expected = try ExpectedFix.load("moving.expected.json")
        let (locations, error, _) = try await run("moving.nmea", until: expected.last?.date)
        #expect(error == nil)
        expectTrack(locations, equals: expected, refinements: true)
        // The track crosses into the southern and western hemispheres.
        #expect(locations.contains { $0.coordinate.latitude < 0 && $0.coordinate.longitude < 0 })
        #expect(locations.contains { $0.coordinate.latitude > 0 && $0.coordinate.longitude > 0 })
        // Never two equal locations in a row.
        #expect(zip(locations, locations.dropFirst()).allSatisfy { $0 != $1 })
        // MSL and ellipsoidal altitude are told apart (the log has a geoid separation).
        #expect(locations.allSatisfy { fix in
            fix.ellipsoidalAltitude.map { hae in fix.altitude.map { hae != $0 } ?? false } ?? false
        })
    }

    @Test("a 2D stretch has no altitude, then 3D fixes do")
    func twoDimensional() async throws {
        let expected = try ExpectedFix.load("twod.expected.json")
        let (locations, error, _) = try await run("twod.nmea", until: expected.last?.date)
        #expect(error == nil)
        expectTrack(locations, equals: expected, refinements: true)
        #expect(locations.contains { $0.fix == .twoDimensional })
    }

    @Test("a 10 Hz receiver's epochs all arrive, in order")
    func tenHertz() async throws {
        let expected = try ExpectedFix.load("tenhz.expected.json")
        let (locations, error, _) = try await run("tenhz.nmea", until: expected.last?.date)
        #expect(error == nil)
        expectTrack(locations, equals: expected, refinements: true)
    }

    @Test("a receiver without a fix: no location; the status waits for a fix, then says gpsd went away")
    func noFix() async throws {
        // Played once: gpsfake then stops gpsd, and the manager starts reconnecting.
        try await GPSFake.run(logs: [Fixtures.url("nofix.nmea")], cycle: 0.01, once: true, lingerAfterEnd: 1,
                              waitForClient: true) { fake in
            let manager = LocationManager(server: try GPSDServer(parsing: fake.server))
            let delegate = StreamingDelegate()
            manager.delegate = delegate
            manager.startUpdatingLocation()
            let (statuses, locations, error) = await delegate.collectStatuses { $0.name == "reconnecting" }
            manager.stopUpdatingLocation()
            #expect(error == nil, "a gpsd that goes away is a status, not an error")
            #expect(locations.isEmpty)
            #expect(manager.location == nil)
            let names = statuses.map(\.name)
            #expect(Array(names.prefix(2)) == ["connecting", "connected"], "\(statuses)")
            #expect(statuses.contains { if case .connected(let release?) = $0 { release.first?.isNumber == true } else { false } },
                    "gpsd's release: \(statuses)")
            #expect(names.contains("waitingForFix"), "\(statuses)")
            #expect(!names.contains("fix") && !names.contains("fixLost"), "never a fix: \(statuses)")
            #expect(names.last == "reconnecting", "\(statuses)")
        }
    }

    @Test("requestLocation() delivers exactly one fix, then disconnects", arguments: [Duration.zero, .seconds(3)])
    func requestLocation(linger: Duration) async throws {
        try await GPSFake.run(logs: [Fixtures.url("moving.nmea")], cycle: 0.01, once: false, waitForClient: true) { fake in
            let server = try GPSDServer(parsing: fake.server)
            let oneShot = LocationManager(server: server)
            oneShot.sessionLinger = linger
            let (statuses, told) = AsyncStream.makeStream(of: LocationStatus.self)
            oneShot.addObserver { if case .status(let status) = $0 { told.yield(status) } }
            let oneShotDelegate = StreamingDelegate()
            oneShot.delegate = oneShotDelegate
            oneShot.requestLocation()
            var first: StreamingDelegate.Event?
            for await event in oneShotDelegate.events {
                if case .status = event { continue }
                first = event
                break
            }
            guard case .location(let fix) = try #require(first) else {
                Issue.record("expected a fix, got \(String(describing: first))")
                return
            }
            #expect(oneShot.location == fix)

            // Let gpsd deliver several more epochs to another client; the one-shot delegate hears nothing more.
            let watcher = LocationManager(server: server)
            let watcherDelegate = StreamingDelegate()
            watcher.delegate = watcherDelegate
            watcher.startUpdatingLocation()
            var more = 0
            for await event in watcherDelegate.events {
                if case .status = event { continue }
                guard case .location = event else { break }
                more += 1
                if more == 5 { break }
            }
            watcher.stopUpdatingLocation()
            #expect(more == 5)
            if linger == .zero {
                oneShot.delegateQueue.sync {}
                #expect(oneShot.location == fix, "the one-shot manager received nothing after its fix")
            } else {
                // Its session lingered, reading gpsd, and closes at the linger's end, having connected once.
                for await status in statuses where status == .stopped { break }
                #expect(oneShot.status == .stopped)
                #expect(oneShot.snapshot.connections == 1)
            }
        }
    }

    @Test("gpsd absent: continuous updates keep trying, as status changes, not errors")
    func gpsdAbsentUpdates() async throws {
        let manager = LocationManager(server: GPSDServer(host: "127.0.0.1", port: closedPort()))
        manager.reconnectPolicy = ReconnectPolicy(initialDelay: .milliseconds(20), maximumDelay: .milliseconds(80))
        let delegate = StreamingDelegate()
        manager.delegate = delegate
        manager.startUpdatingLocation()
        let (statuses, locations, error) = await delegate.collectStatuses { $0 == .connecting(attempt: 4) }
        manager.stopUpdatingLocation()
        #expect(error == nil)
        #expect(locations.isEmpty)
        let attempts = statuses.compactMap { status -> Int? in
            if case .connecting(let attempt) = status { attempt } else { nil }
        }
        #expect(attempts == [1, 2, 3, 4], "\(statuses)")
        #expect(statuses.filter { $0.name == "reconnecting" }.count == 3, "\(statuses)")
    }

    @Test("gpsd absent: requestLocation() fails at once with gpsdUnavailable, connection refused")
    func gpsdAbsentRequest() async throws {
        let manager = LocationManager(server: GPSDServer(host: "127.0.0.1", port: closedPort()))
        let delegate = StreamingDelegate()
        manager.delegate = delegate
        manager.requestLocation()
        let (_, locations, error) = await delegate.collectStatuses { _ in false }
        #expect(locations.isEmpty)
        let failure = try #require(error)
        #expect(failure.code == .gpsdUnavailable)
        #expect(failure.errorNumber == ECONNREFUSED)
        #expect(failure.message.contains("127.0.0.1"))
    }

    @Test("watching a device gpsd does not have fails with gpsd's ERROR as a protocol error")
    func unknownDevice() async throws {
        try await GPSFake.run(logs: [Fixtures.url("moving.nmea")], cycle: 0.05, once: false) { fake in
            var server = try GPSDServer(parsing: fake.server)
            server.device = "/dev/nonexistent"
            let manager = LocationManager(server: server)
            let delegate = StreamingDelegate()
            manager.delegate = delegate
            manager.startUpdatingLocation()
            let (locations, error) = await delegate.collect(until: nil)
            #expect(locations.isEmpty)
            #expect(error?.code == .protocolError)
            #expect(error?.message.contains("/dev/nonexistent") == true)
        }
    }

    @Test("a recording replays to the same fixes as the live run")
    func recordingMatchesLive() async throws {
        let expected = try ExpectedFix.load("moving.expected.json")
        let live = try await run("moving.nmea", until: expected.last?.date).locations

        let replay = LocationManager(recording: Fixtures.url("moving.gpsd.json"), pace: .asFastAsPossible)
        let delegate = StreamingDelegate()
        replay.delegate = delegate
        replay.startUpdatingLocation()
        let (recorded, error) = await delegate.collect(until: expected.last?.date)
        replay.stopUpdatingLocation()
        #expect(error == nil)

        // The device path is the one gpsfake's pseudo-terminal had on each run; everything else must agree, with
        // the gpsd the recording was made with (3.22, libgps API 11). Later gpsds send an epoch once per
        // sentence and fill some values in otherwise: each epoch's position must agree.
        func withoutDevice(_ fixes: [Location]) -> [Location] { fixes.map { var fix = $0; fix.device = nil; return fix } }
        if ReportDecoder.libgpsAPIVersion == 11 {
            #expect(withoutDevice(recorded) == withoutDevice(live))
        } else {
            func epochs(_ fixes: [Location]) -> [String] {
                var seen: [String] = []
                for fix in fixes {
                    let epoch = "\(GPSDTime.string(from: fix.timestamp) ?? "-") \(fix.coordinate) \(fix.fix)"
                    if seen.last != epoch { seen.append(epoch) }
                }
                return seen
            }
            #expect(epochs(recorded) == epochs(live))
        }
        #expect(replay.skippedLineCount == 0)
    }
}

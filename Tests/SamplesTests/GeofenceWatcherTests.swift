import Foundation
import GPSDLocation
import GPSDTestSupport
import Testing

extension SampleTests {
    @Suite("GeofenceWatcher")
    struct GeofenceWatcherTests {
        struct Event: Decodable { var region: String; var state: String; var previous: String; var initial: Bool; var location: Location? }

        @Test("regions from the command line: initial states, then the entry and the exit as they happen, each justified")
        func printsEntryAndExit() async throws {
            // Moving east at about 6.8 m/s; "square" is 40 m round the fix of second 20, "far" is nowhere near.
            let centre = Location.Coordinate(latitude: 52.5, longitude: Sample.longitude(20))
            let (radius, hysteresis) = (40.0, 10.0)
            try await withScratchDirectory("geofence") { scratch in
                let log = try Sample.log("walk", fixes: Array(0..<40), in: scratch)
                try await GPSFake.run(logs: [log], cycle: 0.02, once: true, lingerAfterEnd: 60, waitForClient: true) { fake in
                    let process = try await Sample.start("GeofenceWatcher", [
                        "--json", "--region", "square:\(centre.latitude),\(centre.longitude),\(radius)",
                        "--region", "far:-33.8568,151.2153,500", fake.server,
                    ])
                    let left = await process.waitForOutput(timeout: .seconds(30)) { $0.contains(#""state":"outside","previous":"inside""#) }
                    if !left { Issue.record("no exit printed: \(process.stdoutSoFar)\n\(await fake.diagnosis())") }
                    process.terminate()
                    let result = await process.finish(deadline: .seconds(30))
                    let events = try result.stdoutLines.map { try JSONDecoder().decode(Event.self, from: Data($0.utf8)) }

                    let square = events.filter { $0.region == "square" }, far = events.filter { $0.region == "far" }
                    #expect(square.map(\.state) == ["unknown", "outside", "inside", "outside"], "\(result.stdout)")
                    #expect(square.map(\.initial) == [true, false, false, false])
                    #expect(far.map(\.state) == ["unknown", "outside"], "\(result.stdout)")
                    // Each decision holds by the documented rule, for the fix that made it.
                    for event in square.dropFirst() {
                        let fix = try #require(event.location)
                        // A fix without an accuracy (gpsd's first report of a log: RMC alone) counts as only as accurate
                        // as --max-accuracy allows: 50 m by default.
                        let accuracy = fix.horizontalAccuracy ?? 50
                        let distance = fix.coordinate.distance(from: centre)
                        if event.state == "inside" {
                            #expect(distance + accuracy <= radius - hysteresis / 2, "\(fix.jsonText)")
                        } else {
                            #expect(distance - accuracy >= radius + hysteresis / 2, "\(fix.jsonText)")
                        }
                    }
                    // And as soon as it held: the entry is the first fix deciding inside, the exit the first after it
                    // deciding outside (the track's epochs are 1 s apart; its accuracy is the same for every fix).
                    let seconds = square.dropFirst().compactMap { $0.location?.timestamp }
                        .map { Int($0.timeIntervalSince(NMEA.Track.start).rounded()) }
                    let accuracy = square.last?.location?.horizontalAccuracy ?? 0
                    func distance(_ second: Int) -> Double {
                        Location.Coordinate(latitude: 52.5, longitude: Sample.longitude(second)).distance(from: centre)
                    }
                    let entry = (0..<40).first { distance($0) + accuracy <= radius - hysteresis / 2 }
                    let exit = (0..<40).first { $0 > (entry ?? 0) && distance($0) - accuracy >= radius + hysteresis / 2 }
                    #expect(seconds.dropFirst().map { $0 } == [entry, exit].compactMap { $0 }, "\(seconds)")
                }
            }
        }

        @Test("the README's command, replaying the drive as fast as possible, prints the same on every run: the events of every fix")
        func theReadmeCommandPrintsTheSameOnEveryRun() async throws {
            let region = try GeofenceRegion(identifier: "alexanderplatz", center: .init(latitude: 52.5219, longitude: 13.4132),
                                            radius: 80)
            // What a monitor with the sample's defaults (10 m of hysteresis, fixes to 50 m) decides from each fix of
            // the drive, as the delegate API receives them, printed as the sample prints them.
            let monitor = GeofenceMonitor(hysteresis: 10, maximumAccuracy: 50)
            var events = [monitor.add(region)]
            for fix in try await Self.driveFixes() { events += monitor.process(fix) }
            let expected = events.map { event in
                let time = event.location.flatMap { GPSDTime.string(from: $0.timestamp) } ?? "-"
                let change = event.isInitial ? "initially \(event.state.rawValue)"
                    : event.previousState == .unknown ? "is \(event.state.rawValue)"
                    : event.state == .inside ? "entered" : "left"
                return "\(time)  \(event.identifier)  \(change)"
            }
            #expect(expected.contains { $0.hasSuffix("entered") } && expected.contains { $0.hasSuffix("left") },
                    "the drive leaves the square and comes back: \(expected)")

            for run in 1...10 {
                let result = try await Sample.start("GeofenceWatcher", [
                    "--replay", Sample.recording.path, "--speed", "0",
                    "--region", "alexanderplatz:52.5219,13.4132,80",
                ]).finish(deadline: .seconds(60))
                #expect(result.status == 0, "\(result)")
                #expect(result.stdoutLines == expected, "run \(run): \(result)")
            }
        }

        /// Every fix of the bundled drive, as the delegate API passes them on (each epoch as reported).
        static func driveFixes() async throws -> [Location] {
            final class Collector: LocationManagerDelegate {
                let fixes: AsyncStream<Location>.Continuation
                init(_ fixes: AsyncStream<Location>.Continuation) { self.fixes = fixes }
                func locationManager(_ manager: LocationManager, didUpdateLocations locations: [Location]) {
                    for fix in locations { fixes.yield(fix) }
                }
                func locationManager(_ manager: LocationManager, didFailWithError error: any Error) {
                    Issue.record("the drive failed: \(error)")
                }
            }
            let manager = LocationManager(recording: Sample.recording, pace: .asFastAsPossible)
            let (fixes, continuation) = AsyncStream.makeStream(of: Location.self)
            let collector = Collector(continuation)
            let (ended, end) = AsyncStream.makeStream(of: Void.self)
            _ = manager.addObserver { if case .sessionEnded = $0 { end.yield() } }
            manager.delegate = collector
            manager.startUpdatingLocation()
            for await _ in ended { break }
            manager.delegateQueue.sync {}   // every call decided before the end has been made
            manager.stopUpdatingLocation()
            continuation.finish()
            var all: [Location] = []
            for await fix in fixes { all.append(fix) }
            return all
        }
    }
}

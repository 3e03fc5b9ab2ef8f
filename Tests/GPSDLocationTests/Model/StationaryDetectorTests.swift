import Foundation
import GPSDLocation
import GPSDTestSupport
import Testing

/// ``StationaryDetector`` as a value: tracks made up from a seeded generator (``SyntheticReceiver``), and a real
/// recording of a drive, fed fix by fix; each test asserts what the detector says at every fix.
@Suite("Stationary detector")
struct StationaryDetectorTests {
    private let defaults = StationaryDetector.Configuration()

    /// What the detector says after each fix.
    private func judge(_ locations: [Location], _ configuration: StationaryDetector.Configuration = .init()) -> [Bool] {
        var detector = StationaryDetector(configuration: configuration)
        return locations.map { detector.update(with: $0) }
    }

    /// The runs of consecutive fixes at which the truth is at rest.
    private func stops(_ samples: [SyntheticReceiver.Sample]) -> [ClosedRange<Int>] {
        var stops: [ClosedRange<Int>] = []
        var start: Int?
        for (index, sample) in samples.enumerated() {
            if sample.trueSpeed == 0 {
                start = start ?? index
            } else if let first = start {
                stops.append(first...(index - 1))
                start = nil
            }
        }
        if let start { stops.append(start...(samples.count - 1)) }
        return stops
    }

    /// Checks that the detector is stationary during each stop and only then: from `entry` fixes after the stop's
    /// first fix at rest, through its last, until `exit` fixes after it; never otherwise.
    private func expectStationaryDuringStops(
        _ samples: [SyntheticReceiver.Sample], _ judged: [Bool], stops expected: Int, entry: ClosedRange<Int>,
        exit: ClosedRange<Int>, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let stops = stops(samples)
        #expect(stops.count == expected, sourceLocation: sourceLocation)
        var stationaryFixes = 0
        for stop in stops {
            guard let entered = judged[stop].firstIndex(of: true) else {
                Issue.record("never stationary in the stop at fixes \(stop)", sourceLocation: sourceLocation)
                continue
            }
            let left = judged[(stop.upperBound + 1)...].firstIndex(of: false) ?? judged.count
            #expect(entry.contains(entered - stop.lowerBound),
                    "entered \(entered - stop.lowerBound) fixes into \(stop)", sourceLocation: sourceLocation)
            #expect(exit.contains(left - stop.upperBound), "left \(left - stop.upperBound) fixes after \(stop)",
                    sourceLocation: sourceLocation)
            #expect(!judged[..<stop.lowerBound].suffix(1).contains(true), "stationary before \(stop)",
                    sourceLocation: sourceLocation)
            stationaryFixes += left - entered   // all of them stationary, and none elsewhere: counted below
        }
        #expect(judged.filter { $0 }.count == stationaryFixes, "stationary outside the stops, or flapping within one",
                sourceLocation: sourceLocation)
    }

    // MARK: Tracks

    // Leaving at 2 m/s²: the reported speed (0.1 m/s of noise) first passes the moving speed (1 m/s) when the true
    // one is between 0.8 and 1.4 m/s, then the motion dwell (1 s) must pass. At 1 Hz the first fix after the stop
    // is at 2 m/s, so the second leaves; at 10 Hz, the 14th to the 17th.
    @Test("a drive with stops at traffic lights: stationary exactly during the stops, after the dwell",
          arguments: [(rate: 1.0, exit: 2...2), (10, 14...17)])
    func driveWithStops(rate: Double, exit: ClosedRange<Int>) {
        var receiver = SyntheticReceiver(seed: 0x57A7_1011, rate: rate)
        receiver.drive(stops: [20, 45, 60])
        let judged = judge(receiver.locations)
        // Entering: the dwell (3 s) of slow fixes, the first of which may be in the braking's last half second
        // (below the resting speed).
        expectStationaryDuringStops(receiver.samples, judged, stops: 3,
                                    entry: Int((defaults.dwell - 0.5) * rate)...Int(defaults.dwell * rate), exit: exit)
    }

    @Test("GNSS jitter at rest for ten minutes: stationary after the dwell, never flapping",
          arguments: [(seed: UInt64(1), rate: 1.0), (2, 1), (3, 1), (4, 10)])
    func jitterAtRest(seed: UInt64, rate: Double) throws {
        var receiver = SyntheticReceiver(seed: seed, rate: rate)
        receiver.accuracy = 5...20
        receiver.stop(for: 600)
        // The premise: positions wandering several metres from the truth (at worst 3 to 8 m over the ten minutes),
        // speeds 0.1 to 0.5 m/s.
        let wander = receiver.samples.map(\.error).max() ?? 0
        #expect(wander > 3 && wander < 8, "\(wander) m")
        #expect(receiver.locations.allSatisfy { (0.1...0.5).contains($0.speed ?? -1) })

        let judged = judge(receiver.locations)
        let entered = try #require(judged.firstIndex(of: true))
        #expect(entered <= Int(defaults.dwell * rate) + 5, "entered at \(entered)")
        #expect(!judged[entered...].contains(false), "flapped to moving")
    }

    @Test("a slow walk at 1.2 m/s is never stationary", arguments: [1.0, 10.0])
    func slowWalk(rate: Double) {
        var receiver = SyntheticReceiver(seed: 0x3A1C, rate: rate)
        receiver.accelerate(to: 1.2, by: 1)
        receiver.cruise(for: 600)
        #expect(!judge(receiver.locations).contains(true))
    }

    @Test("a vehicle pulling away at walking pace is moving after the motion dwell", arguments: [1.0, 10.0])
    func pullingAwayAtWalkingPace(rate: Double) {
        var receiver = SyntheticReceiver(seed: 0xD0_0D, rate: rate)
        receiver.stop(for: 60)
        receiver.accelerate(to: 1.3, by: 1.3 * rate)   // at walking pace from the first fix on
        receiver.cruise(for: 10)
        let judged = judge(receiver.locations)
        let lastAtRest = Int(60 * rate) - 1
        #expect(judged[lastAtRest])
        // The first fix in motion and every one after it is evidence; the motion dwell after the first, it is over.
        let left = judged[lastAtRest...].firstIndex(of: false)
        #expect(left == lastAtRest + 1 + Int(defaults.motionDwell * rate), "\(String(describing: left))")
        #expect(left.map { !judged[$0...].contains(true) } == true)
    }

    @Test("while stationary, a speed between the thresholds neither adds to the evidence of motion nor breaks it")
    func speedsBetweenTheThresholds() {
        let time = Date(timeIntervalSince1970: 1_748_779_200)
        func judge(speeds: [Double]) -> [Bool] {
            self.judge(speeds.enumerated().map { second, speed in
                Location(coordinate: .init(latitude: 52.5219, longitude: 13.4132), horizontalAccuracy: 5, speed: speed,
                         timestamp: time.addingTimeInterval(Double(second)))
            })
        }
        let atRest = [0.2, 0.3, 0.2, 0.4, 0.3]
        #expect(judge(speeds: atRest) == [false, false, false, true, true])
        // 1.2 is motion, 0.8 between, 0.3 rest.
        #expect(judge(speeds: atRest + [1.2, 0.8, 0.8]) == [false, false, false, true, true, true, true, true],
                "one fix of motion is not enough, however long ago")
        #expect(judge(speeds: atRest + [1.2, 0.8, 1.2]) == [false, false, false, true, true, true, true, false])
        #expect(judge(speeds: atRest + [1.2, 0.3, 1.2, 0.8])
                == [false, false, false, true, true, true, true, true, true], "broken by a speed at rest")
    }

    // MARK: Positions alone

    @Test("fixes without a speed (2D) are judged by their positions alone, with the longer dwell")
    func positionsAlone() {
        var receiver = SyntheticReceiver(seed: 0x2D, rate: 1)
        receiver.reportsSpeed = false
        receiver.positionNoise = 1
        receiver.accuracy = 3...6
        receiver.drive(stops: [20, 45, 60])
        #expect(receiver.locations.allSatisfy { $0.speed == nil && $0.fix == .twoDimensional })
        let judged = judge(receiver.locations)
        // Entering: the positions' dwell (10 s), which may begin in the braking's last seconds, when the fixes move
        // less than their radius (3 to 6 m) from one to the next (at 5.5, 3 and 0.5 m/s): positions alone cannot tell
        // that from rest. Leaving at 2 m/s²: two radii (6 to 12 m) from the anchor, give or take the noise, take 2
        // to 4 s, the confirming fix one more.
        expectStationaryDuringStops(receiver.samples, judged, stops: 3,
                                    entry: Int(defaults.positionOnlyDwell - 4)...Int(defaults.positionOnlyDwell),
                                    exit: 3...5)
    }

    @Test("without a speed, a walk is told from rest when its fixes are precise enough")
    func slowWalkByPositions() {
        var receiver = SyntheticReceiver(seed: 0x3A1D, rate: 1)
        receiver.reportsSpeed = false
        receiver.positionNoise = 1
        receiver.accuracy = 3...4
        receiver.accelerate(to: 1.2, by: 1)
        receiver.cruise(for: 600)
        #expect(!judge(receiver.locations).contains(true))
    }

    @Test("a low speed too uncertain to count leaves it to the positions; a certain one enters after the dwell")
    func speedAccuracy() {
        func entry(speedAccuracy: ClosedRange<Double>?) -> Int? {
            var receiver = SyntheticReceiver(seed: 0x5EED, rate: 1)
            receiver.speedAccuracy = speedAccuracy
            receiver.stop(for: 30)
            return judge(receiver.locations).firstIndex(of: true)
        }
        // The first fix starts the evidence; it holds for the dwell at the fix that many seconds later.
        #expect(entry(speedAccuracy: nil) == Int(defaults.dwell))
        #expect(entry(speedAccuracy: 0.1...0.4) == Int(defaults.dwell), "speed plus accuracy within the moving speed")
        #expect(entry(speedAccuracy: 2...5) == Int(defaults.positionOnlyDwell), "uncertain: positions alone")
    }

    // MARK: Time

    @Test("a fix earlier than the one before resets; so does a gap, and repeats of one epoch add no time")
    func receiverTime() {
        var receiver = SyntheticReceiver(seed: 0x7137, rate: 1)
        receiver.stop(for: 30)
        let fixes = receiver.locations
        var detector = StationaryDetector()
        for fix in fixes { _ = detector.update(with: fix) }
        #expect(detector.isStationary)

        // Back by ten seconds: forgotten, and the dwell starts over from there.
        let again = judge(Array(fixes[..<20]) + fixes[10...])
        #expect(again[19] && !again[20])
        #expect(again[20...].firstIndex(of: true) == 20 + Int(defaults.dwell))

        // A gap longer than the maximum: the same.
        var late = fixes[29]
        late.timestamp = late.timestamp.addingTimeInterval(defaults.maximumGap + 1)
        let afterGap = detector.update(with: late)
        #expect(!afterGap)

        // One epoch reported again and again (gpsd's several reports per epoch) is no time at rest.
        let repeated = Array(repeating: fixes[0], count: 50)
        #expect(!judge(repeated).contains(true))
        // Each epoch three times: stationary at the same epoch as once.
        let tripled = judge(fixes.flatMap { [$0, $0, $0] })
        #expect(tripled.firstIndex(of: true) == 3 * Int(defaults.dwell))
    }

    @Test("reset forgets everything")
    func resetForgetsEverything() {
        var receiver = SyntheticReceiver(seed: 0x0E, rate: 1)
        receiver.stop(for: 10)
        var detector = StationaryDetector()
        for fix in receiver.locations { _ = detector.update(with: fix) }
        #expect(detector.isStationary)
        detector.reset()
        #expect(detector == StationaryDetector())
        #expect(!detector.isStationary)
    }

    // MARK: Accuracy

    @Test("no accuracy reported: the default radius; an accuracy of 0 counts as none")
    func noAccuracy() {
        var atRest = SyntheticReceiver(seed: 0xACC, rate: 1)
        atRest.accuracy = nil
        atRest.stop(for: 600)
        let judged = judge(atRest.locations)
        #expect(judged.firstIndex(of: true) == Int(defaults.dwell))
        #expect(!judged[Int(defaults.dwell)...].contains(false))

        var zero = atRest.locations
        for index in zero.indices { zero[index].horizontalAccuracy = 0 }
        #expect(judge(zero) == judged)

        var drive = SyntheticReceiver(seed: 0x57A7_1011, rate: 1)
        drive.accuracy = nil
        drive.drive(stops: [20, 45, 60])
        expectStationaryDuringStops(drive.samples, judge(drive.locations), stops: 3,
                                    entry: Int(defaults.dwell - 0.5)...Int(defaults.dwell), exit: 2...2)
    }

    @Test("no input traps: huge speeds and errors, zero accuracy, the antimeridian, the pole, distant dates")
    func extremes() {
        let time = Date(timeIntervalSince1970: 1_748_779_200)
        func fix(_ latitude: Double, _ longitude: Double, _ second: Double, speed: Double? = 0,
                 speedAccuracy: Double? = nil, accuracy: Double? = 5) -> Location {
            Location(coordinate: .init(latitude: latitude, longitude: longitude), horizontalAccuracy: accuracy,
                     speed: speed, speedAccuracy: speedAccuracy, timestamp: time.addingTimeInterval(second))
        }
        // Across the antimeridian, metres apart: at rest.
        var detector = StationaryDetector()
        let across = (0..<6).map { fix(-16.5, $0.isMultiple(of: 2) ? 179.999_99 : -179.999_99, Double($0)) }
        let acrossJudged = across.map { detector.update(with: $0) }
        #expect(acrossJudged == [false, false, false, true, true, true])
        // The largest speed and error there are: motion, twice, leaves.
        let fastest = Double.greatestFiniteMagnitude
        let fast = [6.0, 7].map {
            detector.update(with: fix(-16.5, 179.999_99, $0, speed: fastest, speedAccuracy: fastest))
        }
        #expect(fast == [true, false])
        // A zero speed with the largest error: no certain speed, so the positions dwell.
        let uncertain = (8..<30).map {
            fix(-16.5, 179.999_99, Double($0), speedAccuracy: fastest, accuracy: 0)
        }
        let judged = uncertain.map { detector.update(with: $0) }
        #expect(judged.firstIndex(of: true) == Int(defaults.positionOnlyDwell))

        // At the pole, with the smallest accuracy; then dates as far apart as they go.
        detector.reset()
        let pole = (0..<4).map { fix(90, Double($0) * 90, Double($0), accuracy: .leastNonzeroMagnitude) }
        let poleJudged = pole.map { detector.update(with: $0) }
        #expect(poleJudged == [false, false, false, true])
        var distant = pole[3]
        distant.timestamp = .distantFuture
        let future = detector.update(with: distant)
        distant.timestamp = .distantPast
        let past = detector.update(with: distant)
        #expect(!future && !past)

        // A configuration without any dwell: stationary at the first fix at rest, moving at the first in motion.
        var eager = StationaryDetector.Configuration()
        (eager.dwell, eager.positionOnlyDwell, eager.dwellFixes) = (0, 0, 0)
        (eager.motionDwell, eager.motionFixes, eager.anchorTimeConstant) = (0, 0, 0)
        detector = StationaryDetector(configuration: eager)
        let eagerJudged = [fix(0, 0, 0), fix(0, 0, 0, speed: 2)].map { detector.update(with: $0) }
        #expect(eagerJudged == [true, false])
    }

    // MARK: A real recording

    @Test("drive.gpsd.json: stationary in its one long stop, from the positions' dwell (gpsd's speed error is 21 m/s)")
    func recordedDrive() async throws {
        let url = Fixtures.directory.deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/WhereAmICore/Resources/drive.gpsd.json")
        let gps = AsyncLocationManager(recording: url, pace: .asFastAsPossible)
        var fixes: [Location] = []
        for try await fix in gps.updates(delivery: .oncePerEpoch, bufferingPolicy: .unbounded) { fixes.append(fix) }
        #expect(fixes.count == 174)

        func stationaryTimes(_ fixes: [Location]) -> [String] {
            zip(fixes, judge(fixes)).compactMap { fix, stationary in
                stationary ? GPSDTime.string(from: fix.timestamp) : nil
            }
        }
        func seconds(_ range: ClosedRange<Int>) -> [String] { range.map { "2025-06-01T12:01:\($0).000Z" } }
        // Speed 0.0 from 12:01:44 to 12:01:57 (speed error 20.99 m/s, which gpsd estimated from the position
        // errors: no certain speed), positions within 2 m of each other with eph 17 to 23 m: the positions' dwell
        // (10 s) ends at 12:01:54. 12:01:58 (1.361 m/s) and 12:01:59 (2.908 m/s) are motion: moving at the second.
        // The drive's end (12:02:57 to 12:02:59 at 0.0) is too short.
        #expect(stationaryTimes(fixes) == seconds(54...58))

        // Without gpsd's speed error, the speeds at rest are certain: the dwell (3 s) ends at 12:01:47.
        let certain = fixes.map { fix in
            var fix = fix
            fix.speedAccuracy = nil
            return fix
        }
        #expect(stationaryTimes(certain) == seconds(47...58))
    }
}

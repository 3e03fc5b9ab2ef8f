import Foundation
@testable import GPSDLocation
import GPSDTestSupport
import Testing

/// One whole sky view per receiver epoch, as a value: SKYs and TPVs in, the views passed on out, with the report
/// that passed each (a SKY that completed its epoch, or what began the next).
@Suite("Sky epochs as a value")
struct SkyEpochsTests {
    private static func time(_ second: Int) -> Date { Date(timeIntervalSince1970: 1_748_779_200 + Double(second)) }

    /// A view passed on, and what passed it.
    struct Passed: Equatable {
        enum By: Equatable { case itsLastSky, theNextEpoch, theEnd }
        var view: SkyView
        var by: By
    }

    /// Plays gpsd's JSON lines, decoded by libgps, through the epochs as the state machine does.
    private static func play(_ lines: [String], finishing: Bool = false) throws -> [Passed] {
        let decoder = try ReportDecoder()
        var epochs = SkyEpochs()
        var passed: [Passed] = []
        for line in lines {
            switch decoder.decode(Array(line.utf8)) {
            case .fix(let location)?:
                if let ended = epochs.fix(device: location.device, time: location.timestamp, isFix: true).ended {
                    passed.append(Passed(view: ended, by: .theNextEpoch))
                }
            case .noFix(let device, let time)?:
                if let ended = epochs.fix(device: device, time: time, isFix: false).ended {
                    passed.append(Passed(view: ended, by: .theNextEpoch))
                }
            case .sky(let view, let listed)?:
                let result = epochs.sky(view, listed: listed)
                if let ended = result.ended { passed.append(Passed(view: ended, by: .theNextEpoch)) }
                if let complete = result.complete { passed.append(Passed(view: complete, by: .itsLastSky)) }
            default: break
            }
        }
        if finishing { passed += epochs.finish().map { Passed(view: $0, by: .theEnd) } }
        return passed
    }

    private static func lines(_ fixture: String) throws -> [String] {
        try String(contentsOf: Fixtures.url(fixture), encoding: .utf8).split(whereSeparator: \.isNewline).map(String.init)
    }

    /// The systems of a view, in the order `Satellite.Constellation` lists them.
    private static func systems(_ view: SkyView) -> [Satellite.Constellation] {
        view.constellations.map(\.constellation)
    }

    private static let allSystems: [Satellite.Constellation] = [.gps, .sbas, .galileo, .beidou, .qzss, .glonass]

    private static func listed(_ count: Int, signal: Double = 40, device: String? = "/dev/a") -> SkyView {
        let satellites = (1...count).map {
            Satellite(constellation: .gps, id: $0, prn: $0, elevation: 30, azimuth: 90, signalStrength: signal, isUsed: $0 <= 4)
        }
        return SkyView(satellites: satellites, dilution: .init(horizontal: 1.0, vertical: 1.5), device: device)
    }

    // MARK: gpsd's own streams

    @Test("gpsd 3.22's multi-GNSS stream gives one view an epoch, every system in it, at its last SKY once learned")
    func gpsd322GivesOneWholeViewAnEpoch() throws {
        // 12 epochs: TPVs, then SKYs of 10, 16, 21 and 26 satellites (the first), or 16, 21, 26, none with a time.
        let passed = try Self.play(Self.lines("multignss.gpsd.json"))
        let expected = try ExpectedSky.load("multignss.sky.expected.json")
        #expect(passed.count == expected.count)
        #expect(passed.map(\.view.timestamp) == expected.map { GPSDTime.date(from: $0.time) })
        for (index, each) in passed.enumerated() {
            #expect(each.view.satellites.count == 26 && Self.systems(each.view) == Self.allSystems, "epoch \(index)")
            #expect(each.view.satellites.map(\.signalStrength) == expected[index].satellites.map(\.signal), "epoch \(index)")
            #expect(each.view.dilution.horizontal == 0.71 && each.view.dilution.position == 1.32)
        }
        // The first epoch brought 4 SKYs, the next two 3 each: from the fourth on, each epoch at its last SKY.
        #expect(passed.map(\.by) == Array(repeating: .theNextEpoch, count: 3) + Array(repeating: .itsLastSky, count: 9))
    }

    @Test("gpsd 3.25's stream, SKYs without a list after the GGA and each GSA, gives one whole view an epoch")
    func gpsd325GivesOneWholeViewAnEpoch() throws {
        // Captured from gpsd 3.25 (Debian 13) replaying multignss.nmea: its first TPVs have no time, and each epoch
        // brings 4 SKYs of DOPs alone before the 3 listed ones.
        let passed = try Self.play(Self.lines("multignss.gpsd325.json"))
        let expected = try ExpectedSky.load("multignss.sky.expected.json")
        let indices = passed.compactMap { each in
            expected.firstIndex { $0.satellites.map(\.signal) == each.view.satellites.map(\.signalStrength) }
        }
        #expect(indices.count == passed.count, "every view is an epoch of the log")
        #expect(indices == Array(1...11), "each epoch once, in order, the first one gpsd 3.25 timed out")
        for (each, index) in zip(passed, indices) {
            #expect(each.view.satellites.count == 26 && Self.systems(each.view) == Self.allSystems)
            // The first epoch's TPVs had no time: its view has none either.
            #expect(each.view.timestamp == (index == 1 ? nil : GPSDTime.date(from: expected[index].time)))
            let dilution = each.view.dilution
            #expect(dilution.horizontal == 0.71 && dilution.vertical == 1.11 && dilution.position == 1.32)
            #expect(each.view.used == each.view.satellites.count(where: \.isUsed), "the list's count, not the GGA's")
        }
        #expect(passed.suffix(8).allSatisfy { $0.by == .itsLastSky }, "\(passed.map(\.by))")
    }

    // MARK: Receivers of other kinds

    @Test func aReceiverOfOneSkyAnEpochHasItPassedOnAtThatSkyFromItsThirdEpoch() {
        var epochs = SkyEpochs()
        var passedAt: [Int] = []
        for second in 0..<5 {
            let ended = epochs.fix(device: "/dev/a", time: Self.time(second), isFix: true).ended
            #expect(ended?.timestamp == (second > 0 && second <= 2 ? Self.time(second - 1) : nil))
            if let complete = epochs.sky(Self.listed(8, signal: Double(30 + second)), listed: true).complete {
                #expect(complete.timestamp == Self.time(second), "stamped with its fix's time")
                passedAt.append(second)
            }
        }
        #expect(passedAt == [2, 3, 4])
    }

    @Test func aReceiverWithoutFixesHasItsEpochsToldApartByTheirLists() {
        var epochs = SkyEpochs()
        var passed: [SkyView] = []
        // Each epoch lists GPS, then GPS and more, with signals of its own; a SKY of DOPs alone between them. The
        // first epoch's start was not seen (no TPV before it, no epoch ended by it): the session may have joined it
        // mid-way, and it is not passed on.
        for epoch in 0..<4 {
            for count in [4, 6, 9] {
                let result = epochs.sky(Self.listed(count, signal: Double(30 + epoch)), listed: true)
                passed += [result.ended, result.complete].compactMap { $0 }
            }
            let dops = SkyView(satellites: [], visible: 0, used: 4, dilution: .init(horizontal: 0.8), device: "/dev/a")
            passed += [epochs.sky(dops, listed: false).complete].compactMap { $0 }
        }
        passed += epochs.finish()
        #expect(passed.map(\.satellites.count) == [9, 9, 9])
        #expect(passed.map { $0.satellites.first?.signalStrength } == [31, 32, 33])
        #expect(passed.allSatisfy { $0.timestamp == nil && $0.dilution == .init(horizontal: 0.8, vertical: 1.5) })
    }

    @Test func aSkyWithItsOwnTimeBelongsToThatTimesEpoch() {
        var epochs = SkyEpochs()
        _ = epochs.fix(device: "/dev/a", time: Self.time(0), isFix: true)
        var timed = Self.listed(5)
        timed.timestamp = Self.time(7)
        let first = epochs.sky(timed, listed: true)
        #expect(first == .init())
        timed.satellites += [Satellite(constellation: .galileo, id: 3, prn: 303)]
        let more = epochs.sky(timed, listed: true)
        #expect(more == .init(), "the same epoch: nothing passed")
        timed.timestamp = Self.time(8)
        let next = epochs.sky(timed, listed: true)
        #expect(next.ended?.timestamp == Self.time(7) && next.ended?.satellites.count == 6)
    }

    @Test func anEpochOfMoreSkiesThanLearnedIsPassedOnAgainCompletedAndTheCountLearnedAnew() {
        var epochs = SkyEpochs()
        func epoch(_ second: Int, _ counts: [Int]) -> [SkyView] {
            var passed = [epochs.fix(device: "/dev/a", time: Self.time(second), isFix: true).ended].compactMap { $0 }
            for count in counts { passed += [epochs.sky(Self.listed(count), listed: true).complete].compactMap { $0 } }
            return passed
        }
        _ = epoch(0, [4, 6])
        _ = epoch(1, [4, 6])
        let counts = [(2, [4, 6]), (3, [4, 6, 8]), (4, [4, 6]), (5, [4, 6]), (6, [4, 6])].map { second, skies in
            epoch(second, skies).map(\.satellites.count)
        }
        #expect(counts == [
            [6, 6],   // epoch 1 as 2 began; then, learned, 2 at its second SKY
            [6, 8],   // a third SKY: passed on again, completed
            [],       // the counts differ: not judged
            [6],      // epoch 4, as 5 began; not learned yet
            [6, 6],   // epoch 5 as 6 began, then, learned again, 6 at its last SKY
        ])
    }

    @Test func anEpochOfFewerSkiesThanLearnedIsPassedOnWhenTheNextBegins() {
        var epochs = SkyEpochs()
        for second in 0..<3 {
            _ = epochs.fix(device: "/dev/a", time: Self.time(second), isFix: true)
            _ = epochs.sky(Self.listed(4), listed: true)
            _ = epochs.sky(Self.listed(6), listed: true)
        }
        _ = epochs.fix(device: "/dev/a", time: Self.time(3), isFix: true)
        let fewer = epochs.sky(Self.listed(4), listed: true)
        #expect(fewer == .init())
        let ended = epochs.fix(device: "/dev/a", time: Self.time(4), isFix: true).ended
        #expect(ended?.satellites.count == 4)
    }

    @Test func receiversAreKeptApartByDevice() {
        var epochs = SkyEpochs()
        var passed: [String] = []
        for second in 0..<4 {
            for device in ["/dev/a", "/dev/b"] {
                if let ended = epochs.fix(device: device, time: Self.time(second), isFix: true).ended {
                    passed.append("\(device) \(ended.satellites.count)")
                }
            }
            // Their SKYs interleaved: a's 3 and 5, b's 2, 4 and 7.
            for (device, count) in [("/dev/a", 3), ("/dev/b", 2), ("/dev/a", 5), ("/dev/b", 4), ("/dev/b", 7)] {
                let result = epochs.sky(Self.listed(count, device: device), listed: true)
                for view in [result.ended, result.complete].compactMap({ $0 }) {
                    passed.append("\(device) \(view.satellites.count)")
                }
            }
        }
        #expect(passed == ["/dev/a 5", "/dev/b 7", "/dev/a 5", "/dev/b 7", "/dev/a 5", "/dev/b 7", "/dev/a 5", "/dev/b 7"])
    }

    // MARK: What a view is made of

    @Test func aSkyWithoutAListKeepsTheListAndFillsTheFactorsItLacks() {
        var epochs = SkyEpochs()
        let satellites = [
            Satellite(constellation: .gps, id: 5, prn: 5, elevation: 40, azimuth: 90, signalStrength: 41, isUsed: true),
            Satellite(constellation: .galileo, id: 11, prn: 311, elevation: 20, azimuth: 200, signalStrength: 0),
        ]
        let full = SkyView(satellites: satellites, dilution: .init(horizontal: 1.2, vertical: 2.0, position: 2.3, time: 1.1),
                           device: "/dev/ttyACM0")
        _ = epochs.fix(device: "/dev/ttyACM0", time: Self.time(0), isFix: true)
        _ = epochs.sky(full, listed: true)
        // The next epoch, as gpsd 3.25 sends it: the GGA's HDOP and count used, a GSA's factors, no list.
        _ = epochs.fix(device: "/dev/ttyACM0", time: Self.time(1), isFix: true)
        _ = epochs.sky(SkyView(satellites: [], visible: 0, used: 3, dilution: .init(horizontal: 1.0), device: "/dev/ttyACM0"),
                       listed: false)
        _ = epochs.sky(SkyView(satellites: [], visible: 0, used: 3, dilution: .init(horizontal: 0.9, position: 1.5),
                               device: "/dev/ttyACM0"), listed: false)
        let next = epochs.fix(device: "/dev/ttyACM0", time: Self.time(2), isFix: true).ended
        #expect(next?.satellites == satellites, "the list of the epoch before")
        #expect(next?.count == SatelliteCount(visible: 2, used: 1), "its counts, not the GGA's")
        #expect(next?.dilution == DilutionOfPrecision(horizontal: 0.9, vertical: 2.0, position: 1.5, time: 1.1))
        #expect(next?.timestamp == Self.time(1))
        // Another receiver's SKY without a list inherits nothing; a list of none empties it.
        _ = epochs.fix(device: "/dev/ttyUSB1", time: Self.time(2), isFix: false)
        _ = epochs.sky(SkyView(satellites: [], visible: 0, used: 2, device: "/dev/ttyUSB1"), listed: false)
        let other = epochs.finish().first { $0.device == "/dev/ttyUSB1" }
        #expect(other?.satellites == [] && other?.count == SatelliteCount(visible: 2, used: 2))
    }

    // MARK: A new session, a receiver back

    /// One epoch of `device`'s receiver at `second`: its TPV, then SKYs listing `counts` satellites (each list
    /// extending the one before, as gpsd's SKYs after each system's GSV set). Returns each view passed on, with the
    /// report that passed it: the TPV (the epoch before) or a SKY.
    private static func epoch(
        _ second: Int, _ counts: [Int], of epochs: inout SkyEpochs, device: String = "/dev/a"
    ) -> [SkyView] {
        var passed = [epochs.fix(device: device, time: Self.time(second), isFix: true).ended].compactMap { $0 }
        for count in counts {
            let result = epochs.sky(Self.listed(count, device: device), listed: true)
            passed += [result.ended, result.complete].compactMap { $0 }
        }
        return passed
    }

    @Test("a new session: SKYs before its first TPV are not passed on, and its first cycle's SKY more passes no part of a view")
    func aNewSessionLearnsEachReceiverAfresh() {
        var epochs = SkyEpochs()
        for second in 0..<4 { _ = Self.epoch(second, [16, 21, 26], of: &epochs) }
        epochs.sessionEnded()
        // The new session joins mid-cycle: the last SKYs of an epoch whose TPV it did not see.
        var passed: [SkyView] = []
        for count in [21, 26] {
            let result = epochs.sky(Self.listed(count), listed: true)
            passed += [result.ended, result.complete].compactMap { $0 }
        }
        // A gpsd started again: its first cycle brings a SKY of one system more.
        passed += Self.epoch(20, [10, 16, 21, 26], of: &epochs)
        passed += Self.epoch(21, [16, 21, 26], of: &epochs)
        passed += Self.epoch(22, [16, 21, 26], of: &epochs)
        passed += Self.epoch(23, [16, 21, 26], of: &epochs)
        #expect(passed.map(\.satellites.count) == [26, 26, 26, 26], "whole views only")
        #expect(passed.map(\.timestamp) == [20, 21, 22, 23].map(Self.time), "each epoch once, with its own time")
    }

    @Test("a receiver that went: no view is stamped with a time from before, and its first epoch back waits to be seen whole")
    func aReceiverThatWentIsLearntAfresh() {
        var epochs = SkyEpochs()
        for second in 0..<4 {
            _ = Self.epoch(second, [16, 21, 26], of: &epochs)
            _ = Self.epoch(second, [3, 5], of: &epochs, device: "/dev/b")
        }
        let known = epochs.gone(device: "/dev/a")
        #expect(known && epochs.newest?.device == "/dev/b", "the other receiver's view stays")
        // Back, opened mid-cycle: the SKYs of an epoch whose TPV gpsd did not send, then whole epochs.
        var passed: [SkyView] = []
        for count in [10, 16, 21, 26] {
            let result = epochs.sky(Self.listed(count), listed: true)
            passed += [result.ended, result.complete].compactMap { $0 }
        }
        for second in 16..<20 { passed += Self.epoch(second, [16, 21, 26], of: &epochs) }
        #expect(passed.map(\.timestamp) == [16, 17, 18, 19].map(Self.time), "none of the time before it went")
        #expect(passed.allSatisfy { $0.satellites.count == 26 })
        // The other receiver went on as it was, its count learnt: at its epoch's last SKY.
        #expect(Self.epoch(4, [3, 5], of: &epochs, device: "/dev/b").map(\.satellites.count) == [5])
        // Every receiver gone: nothing of any is kept.
        #expect(epochs.gone(device: nil) && epochs.newest == nil)
        #expect(Self.epoch(5, [3, 5], of: &epochs, device: "/dev/b").isEmpty, "learnt afresh")
    }

    // MARK: Clearing

    @Test func aReceiverThatLosesItsFixSaysSoOnceAndItsClearingDropsItsEpoch() {
        var epochs = SkyEpochs()
        _ = epochs.fix(device: "/dev/a", time: Self.time(0), isFix: true)
        _ = epochs.sky(Self.listed(6), listed: true)
        let lost = epochs.fix(device: "/dev/a", time: Self.time(1), isFix: false)
        #expect(lost.fixLost && lost.ended?.satellites.count == 6)
        #expect(epochs.newest?.satellites.count == 6)
        let known = epochs.clear(device: "/dev/a")
        #expect(known, "a view was known")
        #expect(epochs.newest == nil)
        let again = epochs.fix(device: "/dev/a", time: Self.time(2), isFix: false)
        #expect(!again.fixLost, "once")
        // A SKY of DOPs alone after the clearing keeps no list from before it.
        _ = epochs.sky(SkyView(satellites: [], visible: 0, used: 0, dilution: .init(horizontal: 9), device: "/dev/a"),
                       listed: false)
        let underWay = epochs.clear(device: "/dev/a")
        #expect(underWay, "its epoch under way")
        let left = epochs.finish()
        #expect(left.isEmpty, "dropped")
        let nothing = epochs.clear(device: "/dev/a")
        #expect(!nothing, "nothing left to clear")
    }

    @Test func clearingOneReceiverKeepsAnothersViewAndClearingAllKeepsNone() {
        var epochs = SkyEpochs()
        for device in ["/dev/a", "/dev/b"] { _ = epochs.fix(device: device, time: Self.time(0), isFix: true) }
        _ = epochs.sky(Self.listed(4, device: "/dev/a"), listed: true)
        _ = epochs.sky(Self.listed(5, device: "/dev/b"), listed: true)
        let views = epochs.finish()
        #expect(views.count == 2)
        let newest = epochs.newest
        let other = newest?.device == "/dev/a" ? "/dev/b" : "/dev/a"
        let otherKnown = epochs.clear(device: other)
        #expect(!otherKnown && epochs.newest == newest, "the newest is the other receiver's")
        let allKnown = epochs.clear(device: nil)
        #expect(allKnown && epochs.newest == nil)
    }
}

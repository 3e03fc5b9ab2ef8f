import Foundation
@testable import GPSDLocation
import GPSDTestSupport
import Testing

/// The epoch assembly of the manager's state machine as a value: each input, and what it returns or counts,
/// each test named after the input and what it causes.
@Suite("The epoch assembly as a value")
struct EpochAssemblyTests {
    /// When the test's fixes reach the process.
    static let arrival = Location.Arrival(instant: .now, date: Date(timeIntervalSince1970: 1_748_779_300))

    static let deviation = Location.Deviation(latitude: 0.8, longitude: 0.6, altitude: 1.9)

    /// What became of a fix, comparable. `Location`'s equality leaves the arrival out: tests check it apart.
    enum Outcome: Equatable {
        case older
        case repeated
        case accepted(Location, forgotten: String?)

        init(_ onFix: EpochAssembly.OnFix) {
            switch onFix {
            case .older: self = .older
            case .repeated: self = .repeated
            case .accepted(let location, let forgotten, _): self = .accepted(location, forgotten: forgotten)
            }
        }

        /// The fix passed on, if it was.
        var accepted: Location? {
            guard case .accepted(let location, _) = self else { return nil }
            return location
        }
    }

    /// Assembles `fix` at monotonic time `seconds`: a live fix, or a held one polled at `polledAt`.
    static func assemble(
        _ assembly: inout EpochAssembly, _ fix: Location, origin: EpochAssembly.Origin = .live, at seconds: Double = 10,
        arrival: Location.Arrival = Self.arrival
    ) -> Outcome {
        Outcome(assembly.assemble(fix, origin: origin, now: .seconds(seconds), arrival: arrival))
    }

    /// The time of the test's fix `second`.
    static func time(_ second: Int) -> Date { Date(timeIntervalSince1970: 1_748_779_200 + Double(second)) }

    // MARK: Fixes

    @Test func fixWithoutTimeCountsIt() {
        var assembly = EpochAssembly()
        assembly.fixWithoutTime()
        assembly.fixWithoutTime()
        #expect(assembly.statistics.fixesWithoutTime == 2)
        #expect(assembly.latest == nil)
    }

    @Test func assembleAFirstFixAcceptsItWithItsArrivalAsTheNewest() throws {
        var assembly = EpochAssembly()
        let fix = Location.sample(second: 1)
        let outcome = Self.assemble(&assembly, fix, at: 7)
        #expect(outcome == .accepted(fix, forgotten: nil))
        #expect(outcome.accepted?.arrival == Self.arrival)
        #expect(outcome.accepted?.arrival?.delay == .zero)
        let latest = try #require(assembly.latest)
        #expect(latest.location == fix)
        #expect(latest.measured == .seconds(7))
    }

    @Test func assembleAHeldFixOlderThanTheNewestIsOlder() throws {
        var assembly = EpochAssembly()
        let live = Location.sample(second: 2)
        _ = Self.assemble(&assembly, live, at: 10)
        // Measured a second before the live fix, by the receiver's own clock.
        #expect(Self.assemble(&assembly, Location.sample(second: 1), origin: .held(polledAt: Self.time(2)), at: 11) == .older)
        #expect(try #require(assembly.latest).location == live)
    }

    @Test func assembleAHeldFixOfAnotherReceiverMeasuredBeforeTheNewestIsOlder() throws {
        var assembly = EpochAssembly()
        let live = Location.sample(second: 2)
        _ = Self.assemble(&assembly, live, at: 10)
        var other = Location.sample(second: 1)
        other.device = "/dev/other"
        // gpsd's clock says it was 5 s old at 11 s: measured at 6 s, before the live fix's 10 s.
        #expect(Self.assemble(&assembly, other, origin: .held(polledAt: Self.time(6)), at: 11) == .older)
        // Of unknown age: not newer, as far as anyone can tell.
        #expect(Self.assemble(&assembly, other, origin: .held(polledAt: nil), at: 11) == .older)
        #expect(try #require(assembly.latest).location == live)
    }

    @Test func assembleAHeldFixNoOlderThanTheNewestIsAccepted() throws {
        var assembly = EpochAssembly()
        _ = Self.assemble(&assembly, Location.sample(second: 1), at: 10)
        let held = Location.sample(second: 2)
        // By the live fix, the receiver's second 2 came at 11 s with no delay: a second before it arrived at 12 s.
        let outcome = Self.assemble(&assembly, held, origin: .held(polledAt: Self.time(50)), at: 12)
        #expect(outcome == .accepted(held, forgotten: nil))
        #expect(outcome.accepted?.arrival?.delay == .seconds(1))
        #expect(try #require(assembly.latest).measured == .seconds(11))
    }

    @Test func assembleAHeldFixWithoutLiveFixesIsAgedByGPSDsClock() throws {
        var assembly = EpochAssembly()
        let outcome = Self.assemble(
            &assembly, Location.sample(second: 1), origin: .held(polledAt: Self.time(1).addingTimeInterval(3.5)), at: 20)
        let arrival = try #require(outcome.accepted?.arrival)
        #expect(arrival.instant == Self.arrival.instant)
        #expect(arrival.date == Self.arrival.date)
        #expect(arrival.delay == .milliseconds(3500))
        #expect(try #require(assembly.latest).measured == .milliseconds(16_500))
    }

    @Test func assembleAHeldFixAYearFromGPSDsClockHasNoAge() throws {
        var assembly = EpochAssembly()
        let fix = Location.sample(second: 1)
        let polled = Self.time(1).addingTimeInterval(-365 * 86_400)   // the log is dated a year ahead
        let outcome = Self.assemble(&assembly, fix, origin: .held(polledAt: polled), at: 20)
        #expect(outcome == .accepted(fix, forgotten: nil))
        #expect(outcome.accepted?.arrival?.delay == nil)
        #expect(outcome.accepted?.age == nil)
        let latest = try #require(assembly.latest)
        #expect(latest.location == fix && latest.measured == nil)
    }

    @Test func assembleLiveFixesOfABacklogBurstEachCarryTheirOwnDelay() throws {
        var assembly = EpochAssembly()
        for second in 0..<5 { _ = Self.assemble(&assembly, Location.sample(second: second), at: 100 + Double(second)) }
        // gpsd stalled from second 5 to 11: the fixes of seconds 5 to 10 arrive together at 111 s.
        for second in 5...10 {
            let outcome = Self.assemble(&assembly, Location.sample(second: second), at: 111)
            #expect(outcome.accepted?.arrival?.delay == .seconds(11 - second))
        }
        let next = try #require(Self.assemble(&assembly, Location.sample(second: 11), at: 111.02).accepted?.arrival?.delay)
        #expect(next > .microseconds(19_999) && next < .microseconds(20_001))
    }

    @Test func assembleAFixCompletedByItsGSTKeepsItsFirstArrivalsDelay() throws {
        var assembly = EpochAssembly()
        _ = Self.assemble(&assembly, Location.sample(second: 0), at: 100)
        let late = Location.Arrival(instant: Self.arrival.instant, date: Self.arrival.date, delay: .seconds(3))
        let outcome = Self.assemble(&assembly, Location.sample(second: 1), origin: .completed, at: 104, arrival: late)
        #expect(outcome.accepted?.arrival?.delay == .seconds(3))
        #expect(try #require(assembly.latest).measured == .seconds(101))
    }

    @Test func assembleARepeatOfTheEpochIsRepeated() throws {
        var assembly = EpochAssembly()
        let fix = Location.sample(second: 1)
        _ = Self.assemble(&assembly, fix, at: 10)
        #expect(Self.assemble(&assembly, fix, at: 11) == .repeated)
        #expect(try #require(assembly.latest).measured == .seconds(10))
    }

    @Test func assembleALaterRecordOfTheEpochAddingAValueIsAcceptedAgain() {
        var assembly = EpochAssembly()
        var bare = Location.sample(second: 1)
        bare.altitude = nil
        let fuller = Location.sample(second: 1)
        #expect(Self.assemble(&assembly, bare) == .accepted(bare, forgotten: nil))
        #expect(Self.assemble(&assembly, fuller) == .accepted(fuller, forgotten: nil))
        #expect(Self.assemble(&assembly, bare) == .repeated)
    }

    @Test func assembleTheReceiverBeyondTheMostKeptForgetsTheFirstAndNamesIt() {
        var assembly = EpochAssembly()
        let receivers = (0...EpochAssembly.maximumReceivers).map { "/dev/r\($0)" }
        #expect(receivers.count == 65)
        for device in receivers.dropLast() {
            let fix = Location.sample(second: 1, device: device)
            #expect(Self.assemble(&assembly, fix) == .accepted(fix, forgotten: nil))
        }
        let last = Location.sample(second: 1, device: receivers[64])
        #expect(Self.assemble(&assembly, last) == .accepted(last, forgotten: "/dev/r0"))
        #expect(assembly.coalescer.receiverCount == EpochAssembly.maximumReceivers)
        #expect(!assembly.coalescer.knows("/dev/r0"))
        // The forgotten receiver's fix is taken as a first one again, and makes room in its turn.
        let again = Location.sample(second: 1, device: "/dev/r0")
        #expect(Self.assemble(&assembly, again) == .accepted(again, forgotten: "/dev/r1"))
        // A receiver still kept forgets nobody.
        let known = Location.sample(second: 2, device: "/dev/r5")
        #expect(Self.assemble(&assembly, known) == .accepted(known, forgotten: nil))
    }

    @Test func assembleForgettingAReceiverForgetsItsGST() {
        var assembly = EpochAssembly()
        _ = assembly.deviation(Self.deviation, device: "/dev/r0", time: Self.time(1)).fix
        for n in 0...EpochAssembly.maximumReceivers {
            _ = Self.assemble(&assembly, Location.sample(second: 0, device: "/dev/r\(n)"))
        }
        // r0 was forgotten when the 65th came: its GST of epoch 1 no longer joins its TPV.
        let fix = Location.sample(second: 1, device: "/dev/r0")
        #expect(Self.assemble(&assembly, fix).accepted?.deviation == nil)
    }

    // MARK: GST

    @Test func deviationBeforeItsEpochsTPVJoinsTheTPV() {
        var assembly = EpochAssembly()
        #expect(assembly.deviation(Self.deviation, device: "/dev/test", time: Self.time(1)).fix == nil)
        var joined = Location.sample(second: 1)
        joined.deviation = Self.deviation
        #expect(Self.assemble(&assembly, Location.sample(second: 1)) == .accepted(joined, forgotten: nil))
    }

    @Test func deviationBeforeATPVOfAnotherEpochOrReceiverJoinsNothing() {
        var assembly = EpochAssembly()
        _ = assembly.deviation(Self.deviation, device: "/dev/test", time: Self.time(1)).fix
        _ = assembly.deviation(Self.deviation, device: "/dev/other", time: Self.time(2)).fix
        let fix = Location.sample(second: 2)
        #expect(Self.assemble(&assembly, fix) == .accepted(fix, forgotten: nil))
    }

    @Test func deviationAfterItsEpochsTPVReturnsTheCompletedFixWithItsFirstArrival() throws {
        var assembly = EpochAssembly()
        let fix = Location.sample(second: 1)
        _ = Self.assemble(&assembly, fix, at: 10)
        let joined = assembly.deviation(Self.deviation, device: "/dev/test", time: Self.time(1)).fix
        let (completed, firstArrival) = try #require(joined)
        var expected = fix
        expected.deviation = Self.deviation
        #expect(completed == expected)
        #expect(completed.arrival == nil)
        #expect(firstArrival == Self.arrival)
        // Assembled again, as a later TPV of the epoch, it is passed on.
        let later = Location.Arrival(instant: Self.arrival.instant.advanced(by: .seconds(1)), date: Self.arrival.date)
        #expect(Self.assemble(&assembly, completed, at: 11, arrival: later) == .accepted(expected, forgotten: nil))
        // A second GST of that epoch completes nothing more.
        #expect(assembly.deviation(Self.deviation, device: "/dev/test", time: Self.time(1)).fix == nil)
    }

    @Test func deviationOfAnotherEpochCompletesNothing() {
        var assembly = EpochAssembly()
        _ = Self.assemble(&assembly, Location.sample(second: 2))
        #expect(assembly.deviation(Self.deviation, device: "/dev/test", time: Self.time(1)).fix == nil)
        #expect(assembly.deviation(Self.deviation, device: "/dev/test", time: Self.time(3)).fix == nil)
    }

    @Test func deviationOfAnotherReceiverCompletesNothing() {
        var assembly = EpochAssembly()
        _ = Self.assemble(&assembly, Location.sample(second: 1, device: "/dev/a"))
        #expect(assembly.deviation(Self.deviation, device: "/dev/b", time: Self.time(1)).fix == nil)
        #expect(assembly.deviation(Self.deviation, device: nil, time: Self.time(1)).fix == nil)
    }

    @Test func deviationAfterAHeldFixCompletesNothing() {
        var assembly = EpochAssembly()
        _ = Self.assemble(&assembly, Location.sample(second: 1), origin: .held(polledAt: Self.time(2)))
        #expect(assembly.deviation(Self.deviation, device: "/dev/test", time: Self.time(1)).fix == nil)
    }

    @Test func deviationAfterATPVThatHadOneCompletesNothing() {
        var assembly = EpochAssembly()
        var fix = Location.sample(second: 1)
        fix.deviation = Location.Deviation(latitude: 2)
        _ = Self.assemble(&assembly, fix)
        #expect(assembly.deviation(Self.deviation, device: "/dev/test", time: Self.time(1)).fix == nil)
    }

    // MARK: What is counted

    @Test func rejectCountsDroppedFixesAndDroppedValuesApart() {
        var assembly = EpochAssembly()
        _ = assembly.reject(ReportProblem(.latitude, "91"))
        _ = assembly.reject(ReportProblem(.longitude, "181"))
        _ = assembly.reject(ReportProblem(.altitude, "-20000"))
        #expect(assembly.statistics.rejectedFixes == 2)
        #expect(assembly.statistics.rejectedValues == 1)
    }

    @Test func rejectIsFirstOfItsKindOnce() {
        var assembly = EpochAssembly()
        let firsts = [
            ReportProblem(.latitude, "91"), ReportProblem(.latitude, "-95"),
            ReportProblem(.speed, "99999"), ReportProblem(.speed, "-1"),
        ].map { assembly.reject($0) }
        #expect(firsts == [true, false, true, false])
        #expect(assembly.statistics.rejectedFixes == 2)
        #expect(assembly.statistics.rejectedValues == 2)
    }

    @Test func skippedLineCountsEachLine() {
        var assembly = EpochAssembly()
        for _ in 0..<3 { assembly.skippedLine() }
        #expect(assembly.statistics.skippedLines == 3)
        #expect(assembly.statistics.rejectedFixes == 0)
    }

    @Test func skyKeepsTheNewestWholeViewUntilItsReceiverIsForgotten() {
        var assembly = EpochAssembly()
        #expect(assembly.satellites == nil)
        _ = assembly.skyEpoch(device: "/dev/a", time: Self.time(0), isFix: true)
        _ = assembly.sky(SkyView(satellites: [], visible: 12, used: 8, device: "/dev/a"), listed: true)
        #expect(assembly.satellites == nil, "its epoch may bring more")
        let ended = assembly.skyEpoch(device: "/dev/a", time: Self.time(1), isFix: true).ended
        #expect(ended?.count == SatelliteCount(visible: 12, used: 8))
        #expect(assembly.satellites == SatelliteCount(visible: 12, used: 8))
        let known = assembly.forgetSatellites(of: "/dev/a")
        #expect(known)
        #expect(assembly.sky == nil)
    }

    // MARK: A fresh start

    @Test func startAfreshAcceptsAFixSentAgain() {
        var assembly = EpochAssembly()
        let fix = Location.sample(second: 1)
        _ = Self.assemble(&assembly, fix)
        #expect(Self.assemble(&assembly, fix) == .repeated)
        assembly.startAfresh()
        #expect(Self.assemble(&assembly, fix) == .accepted(fix, forgotten: nil))
    }

    @Test func startAfreshForgetsTheGSTsAndTheLiveFixesTheyComplete() {
        var assembly = EpochAssembly()
        _ = assembly.deviation(Self.deviation, device: "/dev/a", time: Self.time(1)).fix
        _ = Self.assemble(&assembly, Location.sample(second: 1, device: "/dev/b"))
        assembly.startAfresh()
        let fix = Location.sample(second: 1, device: "/dev/a")
        #expect(Self.assemble(&assembly, fix) == .accepted(fix, forgotten: nil))   // without the GST
        #expect(assembly.deviation(Self.deviation, device: "/dev/b", time: Self.time(1)).fix == nil)
    }

    @Test func startAfreshKeepsTheNewestFixAndTheStatistics() throws {
        var assembly = EpochAssembly()
        let fix = Location.sample(second: 1)
        _ = Self.assemble(&assembly, fix)
        assembly.skippedLine()
        assembly.startAfresh()
        #expect(try #require(assembly.latest).location == fix)
        #expect(assembly.statistics.skippedLines == 1)
    }

    // MARK: A held fix's age by gpsd's clock

    @Test func heldDelayIsThePollsTimeMinusTheFixs() {
        let fix = Location.sample(second: 0)
        #expect(EpochAssembly.heldDelay(of: fix, polledAt: Self.time(0).addingTimeInterval(2.5)) == .seconds(2.5))
        #expect(EpochAssembly.heldDelay(of: fix, polledAt: Self.time(0)) == .zero)
        #expect(EpochAssembly.heldDelay(of: fix, polledAt: Self.time(86_400)) == .seconds(86_400))
        // gpsd's clock a little behind the receiver's: no older than new.
        #expect(EpochAssembly.heldDelay(of: fix, polledAt: Self.time(0).addingTimeInterval(-0.5)) == .zero)
    }

    @Test func heldDelayIsUnknownWithoutAPollTime() {
        #expect(EpochAssembly.heldDelay(of: Location.sample(second: 0), polledAt: nil) == nil)
    }

    @Test func heldDelayIsUnknownWhenTheClocksAreNotPlausiblyOne() {
        let fix = Location.sample(second: 10)
        #expect(EpochAssembly.heldDelay(of: fix, polledAt: Self.time(8)) == nil)              // polled 2 s before its time
        #expect(EpochAssembly.heldDelay(of: fix, polledAt: Self.time(86_411)) == nil)         // over a day apart
        #expect(EpochAssembly.heldDelay(of: fix, polledAt: Self.time(10 - 365 * 86_400)) == nil)   // a year
    }
}

import Foundation
@testable import GPSDLocation
import GPSDTestSupport
import Testing

@Suite("EpochCoalescer")
struct EpochCoalescerTests {
    /// A fix `second` seconds into the test epoch with only a position (what the first TPV of an epoch carries).
    private func bare(second: Double, device: String? = "/dev/ttyUSB0") -> Location {
        Location(
            coordinate: .init(latitude: 10, longitude: 20 + second * 1e-4),
            timestamp: Date(timeIntervalSince1970: 1_748_779_200 + second),
            fix: .twoDimensional, device: device)
    }

    /// Feeds `fixes` to a fresh coalescer, in order; whether each passed.
    private func accepted(_ fixes: [Location]) -> [Bool] {
        var coalescer = EpochCoalescer()
        return fixes.map { coalescer.accept($0) }
    }

    @Test func firstFixPasses() {
        #expect(accepted([bare(second: 0)]) == [true])
        #expect(accepted([Location.sample(second: 0, device: nil)]) == [true])
    }

    @Test func severalTPVsOfOneEpochPassOnce() {
        let fix = Location.sample(second: 5)
        var moved = fix
        moved.coordinate.latitude += 1e-7  // a later sentence of the epoch moves the fix a hair, adds nothing
        var faster = fix
        faster.speed = 10.5
        #expect(accepted([fix, fix, moved, faster]) == [true, false, false, false])
    }

    @Test func laterTPVOfSameEpochThatAddsAltitudePassesAgain() {
        let first = bare(second: 1)
        var withAltitude = first
        withAltitude.altitude = 35.5
        // Once known, a repeat of the fuller fix, or of the bare one, adds nothing.
        #expect(accepted([first, withAltitude, withAltitude, first]) == [true, true, false, false])
    }

    @Test func eachAddedValuePassesAgain() {
        let fields: [WritableKeyPath<Location, Double?>] = [
            \.altitude, \.ellipsoidalAltitude, \.horizontalAccuracy, \.verticalAccuracy, \.speed, \.speedAccuracy,
            \.course, \.courseAccuracy, \.climb,
        ]
        for field in fields {
            let first = bare(second: 1)
            var fuller = first
            fuller[keyPath: field] = 1.25
            #expect(accepted([first, fuller]) == [true, true], "adding \(field)")
        }
    }

    @Test func threeDimensionalAfterTwoDimensionalOfSameEpochPasses() {
        let twoD = bare(second: 1)
        var threeD = twoD
        threeD.fix = .threeDimensional
        #expect(accepted([twoD, threeD, twoD]) == [true, true, false])
    }

    @Test func equalFixIsDropped() {
        let fix = Location.sample(second: 3)
        #expect(accepted([fix, fix, fix]) == [true, false, false])
    }

    @Test func newEpochsPass() {
        #expect(accepted((0..<5).map { Location.sample(second: $0) }) == [true, true, true, true, true])
    }

    @Test func lateFixOfEarlierEpochIsDropped() {
        let fixes = [
            Location.sample(second: 10),
            Location.sample(second: 9),                  // a POLL reply overtaken by the stream
            Location.sample(second: 8),                  // exactly 2 s back: still late
            bare(second: 9.5, device: "/dev/test"),      // late, even though it differs
            Location.sample(second: 11),
        ]
        #expect(accepted(fixes) == [true, false, false, false, true])
    }

    @Test func jumpBackOfMoreThanTwoSecondsStartsOver() {
        let fixes = [
            Location.sample(second: 100),
            Location.sample(second: 0),   // the log looped
            Location.sample(second: 1),   // and goes on from there
            Location.sample(second: 1),
        ]
        #expect(accepted(fixes) == [true, true, true, false])
    }

    @Test func jumpBackJustOverTheDiscontinuityPasses() {
        #expect(accepted([bare(second: 10), bare(second: 7.9)]) == [true, true])
        #expect(accepted([bare(second: 10), bare(second: 8.1)]) == [true, false])
    }

    @Test func devicesAreTrackedApart() {
        let fixes = [
            Location.sample(second: 10, device: "/dev/ttyUSB0"),
            Location.sample(second: 5, device: "/dev/ttyUSB1"),   // older, but another receiver
            Location.sample(second: 10, device: "/dev/ttyUSB0"),
            Location.sample(second: 5, device: "/dev/ttyUSB1"),
            Location.sample(second: 4, device: "/dev/ttyUSB1"),   // late for this receiver
            Location.sample(second: 6, device: "/dev/ttyUSB1"),
            Location.sample(second: 5, device: nil),              // no device: a third receiver
        ]
        #expect(accepted(fixes) == [true, true, false, false, false, true, true])
    }

    @Test func resetForgetsEveryDevice() {
        var coalescer = EpochCoalescer()
        let a = Location.sample(second: 1)
        let b = Location.sample(second: 1, device: "/dev/other")
        let first = [a, b].map { coalescer.accept($0) }
        coalescer.reset()
        let second = [a, b, a].map { coalescer.accept($0) }
        #expect(first == [true, true])
        #expect(second == [true, true, false])
    }

    @Test func addsInformationLooksAtWhichValuesAreKnown() {
        let fuller = Location.sample(second: 1)
        var other = fuller
        other.speed = 99  // a different value, but not a value `fuller` lacked
        #expect(!other.addsInformation(to: fuller))
        other.speed = nil
        #expect(fuller.addsInformation(to: other))
        #expect(!other.addsInformation(to: fuller))
    }
}

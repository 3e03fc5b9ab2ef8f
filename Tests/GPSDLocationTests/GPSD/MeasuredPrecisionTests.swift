@testable import GPSDCore
import Testing

/// The precision of gpsd's numbers, by which a value made of two of them is rounded.
@Suite("MeasuredPrecision")
struct MeasuredPrecisionTests {
    @Test("the decimals of a number are those of the shortest text that reads back as it", arguments: [
        (34.15, 2), (4.1, 1), (-4.1, 1), (30.0, 0), (0.0, 0), (1e3, 0), (1e20, 0), (359.875, 3), (1.5e-7, 8),
        (0.000_01, 5), (46.5, 1),
    ])
    func decimals(value: Double, decimals: Int) {
        #expect(MeasuredPrecision.decimals(of: value) == decimals)
    }

    @Test func aNumberThatIsNotFiniteHasNoDecimals() {
        #expect(MeasuredPrecision.decimals(of: .nan) == nil)
        #expect(MeasuredPrecision.decimals(of: -.infinity) == nil)
    }

    /// The noise of the issue: what binary arithmetic makes of decimals, and the decimal they make.
    @Test("a difference or sum of two of gpsd's numbers is the decimal they make", arguments: [
        (34.15, 4.1, 30.05), (69.67, 4.1, 65.57), (46.5, 3.3, 43.2), (0.3, 0.1, 0.2), (359.875, 0.4, 359.475),
        (2.3, 4.1, -1.8),
    ])
    func differences(heading: Double, variation: Double, expected: Double) {
        let raw = heading - variation
        #expect(MeasuredPrecision.rounded(raw, madeOf: heading, variation) == expected)
        #expect(MeasuredPrecision.rounded(expected + variation, madeOf: expected, variation) == heading)
    }

    @Test func theArithmeticsNoiseIsReal() {
        // Were these exact, the rounding above would prove nothing.
        #expect(34.15 - 4.1 != 30.05)
        #expect(69.67 - 4.1 != 65.57)
    }

    @Test("a value past the decimals a Double holds, or not finite, is left as it is")
    func leftAsItIs() {
        #expect(MeasuredPrecision.rounded(0.1 + 0.2, madeOf: 0.1, 1e-12) == 0.1 + 0.2)
        #expect(MeasuredPrecision.rounded(1e300, decimals: 3) == 1e300)
        #expect(MeasuredPrecision.rounded(.infinity, decimals: 1) == .infinity)
        #expect(MeasuredPrecision.rounded(2.5, madeOf: .nan, 1) == 2.5)
        #expect(MeasuredPrecision.rounded(2.25, decimals: 1) == 2.3, "a tie goes away from zero")
        #expect(MeasuredPrecision.rounded(-2.25, decimals: 1) == -2.3)
    }
}

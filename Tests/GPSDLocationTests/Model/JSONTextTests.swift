import Foundation
import GPSDLocation
import Testing

/// `JSONText` and `Location.jsonFields`, the public pieces for writing lines of JSON by hand around fixes (whereami's
/// formats, the samples' messages): what they write reads back as what went in, and shows on a terminal as text.
@Suite("JSON text")
struct JSONTextTests {
    /// Names gpsd or a recording could send: quotes and backslashes, a terminal's commands, line breaks, a
    /// bidirectional override, the line separator, text beyond the Basic Multilingual Plane.
    static let hostile = [
        "/dev/ttyUSB0", "", #"a "quoted" \ name"#, "\u{1B}[2J\u{1B}]0;owned\u{07}", "line\nbreak\r\ttab",
        "\u{0}\u{7F}\u{85}\u{9F}", "abc\u{202E}fdp.exe", "\u{2028}\u{2029}\u{061C}\u{2066}", "Zürich 🛰️",
    ]

    // Not test arguments: the test's log would show them, and a terminal obey them.

    @Test func aQuotedStringReadsBackAsTheSameText() throws {
        for text in Self.hostile {
            let decoded = try JSONDecoder().decode(String.self, from: Data(JSONText.quoted(text).utf8))
            #expect(decoded == text, "\(text.debugDescription)")
        }
    }

    @Test func aQuotedStringHoldsNothingATerminalWouldObey() {
        for text in Self.hostile {
            let quoted = JSONText.quoted(text)
            #expect(quoted.unicodeScalars.allSatisfy { $0.isPrintable }, "\(quoted.debugDescription)")
            #expect(quoted.first == "\"" && quoted.last == "\"")
        }
    }

    @Test func quotingEscapesOnlyWhatItMust() {
        #expect(JSONText.quoted("/dev/tty\"S0\u{1B}[2J") == #""/dev/tty\"S0\u001b[2J""#)
        #expect(JSONText.quoted("Zürich \\ 🛰️") == #""Zürich \\ 🛰️""#)
        #expect(JSONText.quoted("\u{202E}\n") == #""\u202e\n""#)
    }

    @Test func printableIsFalseForControlsAndBidirectionalFormatting() {
        for scalar: Unicode.Scalar in ["\u{0}", "\u{1B}", "\n", "\u{7F}", "\u{9B}", "\u{200E}", "\u{202E}", "\u{2028}", "\u{2069}"] {
            #expect(!scalar.isPrintable, "U+\(String(scalar.value, radix: 16))")
        }
        for scalar: Unicode.Scalar in [" ", "a", "~", "\u{A0}", "ü", "\u{200D}", "\u{FFFD}", "🛰"] {
            #expect(scalar.isPrintable, "U+\(String(scalar.value, radix: 16))")
        }
    }

    @Test func numbersAreTheShortestTextThatReadsBack() throws {
        for value in [52.52180605, -0.0, 35, 1e-7, 123_456_789.123, 1e16, -70.25] {
            let text = JSONText.number(value)
            #expect(try JSONDecoder().decode(Double.self, from: Data(text.utf8)) == value, "\(text)")
        }
        #expect(JSONText.number(35) == "35.0")
        #expect(JSONText.fixed(13.41339573, digits: 7) == "13.4133957")
        #expect(JSONText.fixed(-0.04, digits: 1) == "-0.0")
    }

    @Test func aDecimalCountOutOfRangeIsClampedNotATrap() {
        #expect(JSONText.fixed(1.23456789012, digits: 12) == "1.234567890")
        #expect(JSONText.fixed(2.5, digits: -3) == "2")
        #expect(JSONText.fixed(2.5, digits: .min) == "2")
    }

    @Test func jsonFieldsAreJSONTextsFieldsInItsOrder() throws {
        let fix = LocationJSONTests.full
        let fields = fix.jsonFields()
        let object = "{" + fields.map { JSONText.quoted($0.key) + ":" + $0.value }.joined(separator: ",") + "}"
        #expect(object == fix.jsonText)
        let withoutPosition = fix.jsonFields(includingCoordinate: false)
        #expect(withoutPosition.map(\.key) == fields.map(\.key).filter { $0 != "latitude" && $0 != "longitude" })
    }

    @Test func aHostileDeviceNameInAFixReadsBackAsItWas() throws {
        for name in Self.hostile {
            var fix = LocationJSONTests.full
            fix.device = name
            #expect(fix.jsonText.unicodeScalars.allSatisfy { $0.isPrintable })
            let decoded = try JSONDecoder().decode(Location.self, from: Data(fix.jsonText.utf8))
            #expect(decoded.device == name)
        }
    }
}

import Foundation
@testable import GPSDCore
import Testing

/// The walk that checks a line's shape before libgps sees it also finds the text of its `time` members, so that
/// a line is not searched a second time: for every line without escapes it finds what the lenient search finds
/// (``Plausibility/firstTimeTextNotACalendarTime(in:)``, which reads `time` members as libgps does).
@Suite("A report's time text, found on the shape's walk")
struct ReportShapeTimeTests {
    private static func shape(_ line: String) -> JSONScan.ReportShape? {
        Array(line.utf8).withUnsafeBufferPointer { JSONScan.reportShape($0) }
    }

    @Test(arguments: [
        #"{"class":"TPV","mode":3,"time":"2025-06-01T12:00:00.000Z","lat":1.5}"#,
        #"{"class":"TPV","mode":3,"time":"2024-13-45T99:99:99Z","lat":1.5}"#,
        #"{"class":"TPV","time" : "not a time","mode":3}"#,
        #"{"class":"TPV","time":5,"mode":3,"time":"1999-99-99T00:00:00Z"}"#,
        #"{"class":"TPV","time":"2025-06-01T12:00:00Z","time":"also not"}"#,
        #"{"class":"SKY","time":"2025-06-01T12:00:00.000Z","satellites":[{"PRN":5,"time":"x"},{"time":"y"}]}"#,
        #"{"class":"SKY","satellites":[{"PRN":5,"el":45.0}],"hdop":1.0}"#,
        #"{"class":"ATT","timestamp":"x","time":"2025-06-01T12:00:00.000Z"}"#,
        #"{"class":"TPV","device":"time","mode":3}"#,
    ])
    func theWalkFindsWhatTheSearchFinds(line: String) throws {
        let shape = try #require(Self.shape(line))
        #expect(!shape.hasEscapes)
        #expect(shape.firstTimeNotACalendarTime == Plausibility.firstTimeTextNotACalendarTime(in: Array(line.utf8)))
    }

    @Test func theSearchFindsTheExpectedTexts() {
        // What the walk must match, spelled out: the first text that is not a calendar time, the satellites' too.
        #expect(Self.shape(#"{"class":"TPV","time":"2024-13-45T99:99:99Z"}"#)?.firstTimeNotACalendarTime
            == "2024-13-45T99:99:99Z")
        #expect(Self.shape(#"{"class":"SKY","satellites":[{"PRN":5,"time":"x"}]}"#)?.firstTimeNotACalendarTime == "x")
        #expect(Self.shape(#"{"class":"TPV","time":"2025-06-01T12:00:00.000Z"}"#)?.firstTimeNotACalendarTime == nil)
    }

    @Test func aLineWithEscapesSaysSoAndTheDecoderSearchesIt() throws {
        // An escaped quote puts "time" where the walk sees a key's inside, and libgps's lenient reading a member.
        let line = #"{"class":"TPV","mode":3,"lat":1.5,"lon":2.5,"a\"time":"bogus","time":"2025-06-01T12:00:00.000Z"}"#
        let shape = try #require(Self.shape(line))
        #expect(shape.hasEscapes)
        #expect(Plausibility.firstTimeTextNotACalendarTime(in: Array(line.utf8)) == "bogus")
        let decoder = try ReportDecoder()
        _ = decoder.decode(Array(line.utf8))
        #expect(decoder.problems.contains { $0.value == "bogus" }, "\(decoder.problems)")
    }
}

@testable import GPSDCore
import GPSDTestSupport
import Testing

/// The judgement of a peer's first bytes: gpsd greets with its VERSION, a line of its JSON; anything else first
/// is not gpsd.
@Suite("GPSDGreeting")
struct GPSDGreetingTests {
    private static let version = Array((FakeGPSD.versionLine + "\r\n").utf8)

    @Test func gpsdsVersionLineIsGPSD() {
        var greeting = GPSDGreeting()
        #expect(greeting.append(Self.version + Array(#"{"class":"DEVICES","devices":[]}"#.utf8)) == .gpsd)
        #expect(greeting.received.count == Self.version.count + 32, "everything received is kept for the reader")
    }

    @Test("a greeting split across reads is judged when its line is whole")
    func aSplitGreeting() {
        var greeting = GPSDGreeting()
        #expect(greeting.append(Self.version.prefix(1)) == .incomplete)
        #expect(greeting.append(Self.version.dropFirst().prefix(20)) == .incomplete)
        #expect(greeting.append(Self.version.dropFirst(21)) == .gpsd)
        #expect(greeting.received == Self.version)
    }

    @Test("white space before the first line is let through")
    func whiteSpaceFirst() {
        var greeting = GPSDGreeting()
        #expect(greeting.append(Array(" \r\n".utf8)) == .incomplete)
        #expect(greeting.append(Self.version) == .gpsd)
    }

    @Test("any report in gpsd's JSON first is gpsd's", arguments: [
        #"{"class":"TPV","mode":1}"#, #"{"class":"WATCH","enable":true}"#,
    ])
    func anotherReportFirst(line: String) {
        var greeting = GPSDGreeting()
        #expect(greeting.append(Array((line + "\n").utf8)) == .gpsd)
    }

    /// What a web server of HTTP/1.x answers gpsd's `?WATCH` with.
    @Test func aWebServersAnswerIsNotGPSD() {
        var greeting = GPSDGreeting()
        let answer = "HTTP/1.0 400 Bad request syntax ('?WATCH={\"enable\":true,\"json\":true};')\r\n"
            + "Server: SimpleHTTP/0.6 Python/3.11.2\r\n\r\n<!DOCTYPE HTML>"
        let verdict = greeting.append(Array(answer.utf8))
        #expect(verdict == .notGPSD(firstLine: "HTTP/1.0 400 Bad request syntax ('?WATCH={\"enable\":true,\"jso…"))
    }

    @Test("a first byte gpsd never sends first is judged at once, without waiting for its line's end", arguments: [
        "H", "$GPRMC,120000.00,A", "SSH-2.0-OpenSSH_9.2p1", "[1,2]", "\u{1B}[2J",
    ])
    func judgedAtOnce(start: String) {
        var greeting = GPSDGreeting()
        guard case .notGPSD = greeting.append(Array(start.utf8)) else {
            Issue.record("\(start) is not gpsd")
            return
        }
    }

    @Test("JSON that is not a report of gpsd's is not gpsd", arguments: [
        #"{"jsonrpc":"2.0","id":1}"#, #"{"class":"TPV""#, "{not json}", #"{"class":1}"#,
    ])
    func jsonThatIsNoReport(line: String) {
        var greeting = GPSDGreeting()
        #expect(greeting.append(Array((line + "\n").utf8)) == .notGPSD(firstLine: line))
    }

    @Test("a first line longer than any report, without its end, is not gpsd")
    func anEndlessFirstLine() {
        var greeting = GPSDGreeting(lineLimit: 100)
        #expect(greeting.append(Array(#"{"class":"VERSION","release":""#.utf8)) == .incomplete)
        guard case .notGPSD = greeting.append([UInt8](repeating: UInt8(ascii: "x"), count: 100)) else {
            Issue.record("a line past the limit")
            return
        }
    }

    @Test("what is shown of a first line: what a terminal would obey replaced, at most 60 characters")
    func theLineAsShown() {
        var greeting = GPSDGreeting()
        let hostile = Array("\u{1B}]0;owned\u{07} ".utf8) + [0xFF, 0x0A]   // an escape sequence, a byte not UTF-8
        #expect(greeting.append(hostile) == .notGPSD(firstLine: "\u{FFFD}]0;owned\u{FFFD} \u{FFFD}"))
        var long = GPSDGreeting()
        let verdict = long.append(Array((String(repeating: "a", count: 61) + "\n").utf8))
        #expect(verdict == .notGPSD(firstLine: String(repeating: "a", count: 60) + "…"))
    }
}

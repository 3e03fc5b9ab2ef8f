@testable import GPSDCore
import GPSDLocation
import Glibc
import Testing

/// Lines on which libgps 3.22's parser loops for ever, holding a session's reader thread (found by Scripts/fuzz
/// decoder, reduced to JSON that still loops): the decoder decides them without libgps. In a child process that
/// an alarm ends, so that one that loops again fails its test instead of holding the run.
@Suite("Regressions: lines libgps loops on", .timeLimit(.minutes(1)))
struct LibgpsLoopTests {
    static let lines = [
        // Not JSON at all.
        #"{e"class":"WATCH""#,
        // Its first "class" is a device's, not the report's.
        #"{"clmessageass":"DEVICES","devices":[{"class":"DEVICE","path":"/dev/pts/1","flags":1}]}"#,
        // A device's driver longer than libgps's 64 bytes, and a path that is a number.
        #"{"class":"DEVICES","devices":[{"class":"DEVICE","path":"/dev/pts/1","driver":"\#(String(repeating: "g", count: 65))"}]}"#,
        #"{"class":"DEVICES","devices":[{"class":"DEVICE","path":5}]}"#,
        // Arrays of objects where libgps expects none.
        #"{"class":"TPV","":[{"":""}],"":[{"":""}],"":[{"":""}],"":[{"class":"SKY","":5}],"":[{"":5}],"":[],"":[{"":""}]}"#,
        #"{"class":"DEVICE","":[{"":""},{"class":"DEVICE","":"","":4,"":""}]}"#,
        // A second class member.
        #"{"class":"TPV","class":"VERSION","release":"3.22","rev":"3.22","proto_major":3,"proto_minor":14}"#,
        // A NUL inside a string: libgps's C string ends there, inside the string.
        "{\"class\":\"DEVICE\",\"path\":\"/dev/pts/1\",\"activated\":\"2026-11-22T02:1\u{0}\u{0}\",\"mode\":1}",
        // A satellite with a name longer than libgps's 30 bytes, then a class.
        #"{"class":"SKY","satellites":[{"\#(String(repeating: "k", count: 31))":6,"class":"TPV"}]}"#,
    ]

    @Test("each is decided without libgps: not a report, or a DEVICES counted here")
    func decidedWithoutLibgps() async {
        await #expect(processExitsWith: .success) {
            alarm(30)   // a line that loops again ends the child with SIGALRM: the time limit would not end it
            let decoder = try ReportDecoder()
            let reports = LibgpsLoopTests.lines.map { decoder.decode(Array($0.utf8)) }
            #expect(reports == [nil, nil, .devices(count: 1), .devices(count: 1), nil, nil, nil, nil, nil])
        }
    }

    @Test("a device list is counted whole, past libgps's four")
    func devicesCounted() throws {
        let device = #"{"class":"DEVICE","path":"/dev/ttyUSB0","driver":"NMEA0183","activated":"2025-06-01T12:00:00.000Z"}"#
        let line = #"{"class":"DEVICES","devices":["# + Array(repeating: device, count: 5).joined(separator: ",") + "]}"
        #expect(try ReportDecoder().decode(Array(line.utf8)) == .devices(count: 5))
        #expect(try ReportDecoder().decode(Array(#"{"class":"DEVICES","devices":[]}"#.utf8)) == .devices(count: 0))
    }

    @Test("a name libgps cannot hold, or a class inside a satellite, keeps the report from libgps")
    func namesLibgpsCannotHold() throws {
        let decoder = try ReportDecoder()
        func tpv(_ name: String) -> [UInt8] {
            Array(#"{"class":"TPV","device":"/dev/pts/1","mode":3,"lat":1.0,"lon":2.0,"\#(name)":1}"#.utf8)
        }
        func sky(_ satellite: String) -> [UInt8] {
            Array(#"{"class":"SKY","device":"/dev/pts/1","satellites":[{"PRN":5,"used":true},{\#(satellite)}]}"#.utf8)
        }
        let thirty = String(repeating: "k", count: 30), thirtyOne = String(repeating: "k", count: 31)
        guard case .fixWithoutTime = decoder.decode(tpv(thirty)) else { Issue.record("a 30-byte name is libgps's limit"); return }
        #expect(decoder.decode(tpv(thirtyOne)) == nil)
        #expect(decoder.decode(tpv(String(repeating: "\\\"", count: 15) + "k")) == nil, "escapes count as their bytes")
        guard case .sky = decoder.decode(sky(#""\#(thirty)":1"#)) else { Issue.record("a SKY"); return }
        #expect(decoder.decode(sky(#""\#(thirtyOne)":1"#)) == nil)
        #expect(decoder.decode(sky(#""PRN":7,"class":"TPV""#)) == nil)
    }
}

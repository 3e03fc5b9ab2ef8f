import Foundation
@testable import GPSDCore
import GPSDLocation
import GPSDSystem
import GPSDTestSupport
import Testing

/// 100,000+ seeded random and mutated report lines through the path live input takes (a socket, the session's
/// reader thread, libgps, the plausibility checks, the manager, a stream): no crash, and nothing impossible out.
@Suite("Fuzzing the live path", .timeLimit(.minutes(5)))
struct FuzzTests {
    static let seed: UInt64 = 0xF0CC_5EED_0000_0009
    static let lineCount = 100_000

    @Test func randomAndMutatedLinesNeverCrashAndNeverYieldAnImpossibleFix() async throws {
        var random = SplitMix64(seed: Self.seed)
        var fuzzer = LineFuzzer()
        var bytes: [UInt8] = []
        for _ in 0..<Self.lineCount { bytes += fuzzer.line(using: &random) + [UInt8(ascii: "\n")] }
        let sentinel = ReportLines.tpv(second: 100_000_000, longitude: 13.4)   // later than any fuzzed fix
        bytes += Array((sentinel + "\n").utf8)

        let gpsd = try FakeGPSD()
        let manager = LocationManager(source: GPSDSessionSource(server: gpsd.server))
        let gps = AsyncLocationManager(manager: manager)
        let updates = gps.updates(bufferingPolicy: .unbounded)
        let client = await gpsd.nextClient()
        await client.waitUntilReceived { $0.contains("?WATCH=") }
        let stream = bytes
        let sending = Task { await onThread { client.sendRaw(stream) } }

        var delivered = 0
        var impossible: [String] = []
        let last = GPSDTime.date(from: ReportLines.time(100_000_000))
        for try await fix in updates {
            delivered += 1
            if let problem = Plausibility.impossibility(of: fix) {
                impossible.append("\(problem): \(fix)")
            }
            if fix.timestamp == last { break }
        }
        await sending.value
        let statistics = manager.statistics
        print("fuzz: \(Self.lineCount) lines (seed \(String(Self.seed, radix: 16))): \(delivered) fixes delivered, "
              + "\(statistics.skippedLines) lines skipped, \(statistics.rejectedFixes) fixes and "
              + "\(statistics.rejectedValues) values rejected, \(statistics.fixesWithoutTime) fixes without a time, "
              + "\(impossible.count) impossible fixes out")
        #expect(impossible.isEmpty, "\(impossible.prefix(5))")
        #expect(delivered > 1_000, "the fuzz also makes many good fixes")
        #expect(statistics.skippedLines > 1_000 && statistics.rejectedFixes > 1_000 && statistics.rejectedValues > 1_000)
        await gps.stop()
    }
}

/// Report lines: good ones, and good ones mutated (bytes flipped, dropped, inserted; values replaced with
/// extremes; cut short), other classes, and noise.
struct LineFuzzer {
    private var second = 0
    private let extremes = ["1e308", "-1e308", "1e400", "-0", "0", "91.5", "-90.0000001", "180.5", "360", "400", "-1",
                            "99999999", "1.7976931348623157e308", "4.9e-324", "\"NaN\"", "null", "true", "[]", "{}",
                            "\"2024-13-45T99:99:99Z\"", "\"2025-02-29T00:00:00Z\"", "\"\""]
    private let keys = ["lat", "lon", "altMSL", "altHAE", "speed", "climb", "track", "eph", "epv", "eps", "epd", "epc",
                        "mode", "time", "status", "device", "class"]

    mutating func line(using random: inout SplitMix64) -> [UInt8] {
        second += 1
        let good = ReportLines.tpv(second: second, latitude: Double.random(in: -89...89, using: &random),
                                   longitude: Double.random(in: -179...179, using: &random))
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<25: return Array(good.utf8)
        case 25..<45:   // one value replaced by an extreme
            let key = keys.randomElement(using: &random)!
            let value = extremes.randomElement(using: &random)!
            guard let range = good.range(of: "\"\(key)\":") else { return Array(good.utf8) }
            let end = good[range.upperBound...].firstIndex { $0 == "," || $0 == "}" } ?? good.endIndex
            return Array((good[..<range.upperBound] + value + good[end...]).utf8)
        case 45..<60:   // bytes flipped
            var bytes = Array(good.utf8)
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            }
            return bytes.filter { $0 != UInt8(ascii: "\n") }
        case 60..<70:   // cut short, or bytes dropped
            var bytes = Array(good.utf8)
            if Bool.random(using: &random) { return Array(bytes.prefix(Int.random(in: 0..<bytes.count, using: &random))) }
            for _ in 0..<Int.random(in: 1...6, using: &random) where bytes.count > 1 {
                bytes.remove(at: Int.random(in: 0..<bytes.count, using: &random))
            }
            return bytes
        case 70..<78:   // other classes
            return Array([
                #"{"class":"SKY","device":"/dev/ttyUSB0","satellites":[{"PRN":5,"used":true}]}"#,
                ReportLines.devices, #"{"class":"DEVICE","path":"/dev/ttyUSB0","activated":0}"#, ReportLines.noFix,
                #"{"class":"POLL","time":"2025-06-01T12:00:06.000Z","active":1,"tpv":[\#(good)],"sky":[]}"#,
                #"{"class":"VERSION","release":"3.22","rev":"3.22","proto_major":3,"proto_minor":14}"#,
                #"{"class":"ERROR","message":"#,   // cut short: an ERROR that parses would end the session
            ].randomElement(using: &random)!.utf8)
        case 78..<88:   // a well-formed TPV with random numbers everywhere
            let members = keys.filter { !["class", "device", "time", "mode"].contains($0) }.map { key in
                "\"\(key)\":\(Double.random(in: -1e6...1e6, using: &random))"
            }
            return Array(#"{"class":"TPV","mode":3,"time":"\#(ReportLines.time(second))",\#(members.joined(separator: ","))}"#.utf8)
        default:   // noise
            return (0..<Int.random(in: 0...300, using: &random)).map { _ in
                UInt8.random(in: 0...255, using: &random)
            }.filter { $0 != UInt8(ascii: "\n") }
        }
    }
}

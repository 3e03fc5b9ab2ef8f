import Foundation
@testable import GPSDCore
import GPSDSystem
import GPSDLocation
import GPSDTestSupport
import Testing

/// Inputs that once trapped (SIGILL: an overflow, a conversion, an index), each run in a child process of its own
/// (an exit test), so that a trap fails its test and not the run. Each body checks what the input must give
/// instead: a value, a refusal with a typed error, or a value left out.
@Suite("Regressions: inputs that trapped")
struct TrapTests {
    /// A TPV whose time has a fraction of 20 digits: the digits were summed into an `Int`.
    static let longFraction = #"{"class":"TPV","device":"/dev/x","mode":3,"time":"2025-06-01T12:00:05.12345678901234567890Z","lat":1.0,"lon":2.0}"#

    @Test("a time with a 20-digit fraction is refused as a time (up to 9 digits are taken), the fix held back")
    func twentyDigitFractionThroughTheDecoder() async {
        await #expect(processExitsWith: .success) {
            let decoder = try ReportDecoder()
            guard case .fixWithoutTime? = decoder.decode(Array(TrapTests.longFraction.utf8)) else {
                Issue.record("not a fix without its time")
                return
            }
            #expect(decoder.problems.map(\.kind) == [.time])
            #expect(Plausibility.isCalendarTime("2025-06-01T12:00:05.123456789Z"))
            #expect(!Plausibility.isCalendarTime("2025-06-01T12:00:05.1234567890Z"))
            #expect(!Plausibility.isCalendarTime("2025-06-01T12:00:05.\(String(repeating: "9", count: 400))Z"))
        }
    }

    @Test("JSONDecoder refuses a fix whose time has a 20-digit fraction with dataCorrupted")
    func twentyDigitFractionThroughJSONDecoder() async {
        await #expect(processExitsWith: .success) {
            let json = #"{"timestamp":"2025-06-01T12:00:05.12345678901234567890Z","latitude":1.0,"longitude":2.0}"#
            #expect {
                try JSONDecoder().decode(Location.self, from: Data(json.utf8))
            } throws: { error in
                guard case DecodingError.dataCorrupted(let context) = error else { return false }
                return context.codingPath.last?.stringValue == "timestamp"
            }
        }
    }

    @Test("a live peer on gpsd's protocol sends the line: the stream goes on to the next fix")
    func twentyDigitFractionFromALivePeer() async {
        await #expect(processExitsWith: .success) {
            let gpsd = try FakeGPSD()
            let gps = AsyncLocationManager(manager: LocationManager(source: GPSDSessionSource(server: gpsd.server)))
            let updates = gps.updates()
            let client = await gpsd.nextClient()
            await client.waitUntilReceived { $0.contains("?WATCH=") }
            client.send(TrapTests.longFraction)
            client.send(ReportLines.tpv(second: 7))
            var fixes = updates.makeAsyncIterator()
            let fix = try await fixes.next()
            #expect(fix?.timestamp == GPSDTime.date(from: ReportLines.time(7)), "the fix after it")
            await gps.stop()
        }
    }

    @Test("a time with no calendar text (far future, NaN, infinite) is left out or refused, never written")
    func unwritableTimestamps() async {
        await #expect(processExitsWith: .success) {
            for seconds in [1e300, -1e300, .nan, .infinity, -.infinity, 9.3e15] {
                let date = Date(timeIntervalSince1970: seconds)
                #expect(GPSDTime.string(from: date) == nil, "\(seconds)")
                let fix = Location(coordinate: .init(latitude: 1, longitude: 2), timestamp: date)
                #expect(!fix.jsonText.contains("timestamp"), "left out of \(fix.jsonText)")
                #expect(!fix.description.contains("@"), "left out of \(fix.description)")
                #expect(throws: EncodingError.self) { try JSONEncoder().encode(fix) }
            }
            // The largest dates that have a text still get one (years far outside gpsd's, but writable).
            #expect(GPSDTime.string(from: Date(timeIntervalSince1970: 9.2e15)) != nil)
            #expect(GPSDTime.string(from: Date(timeIntervalSince1970: -9.2e15)) != nil)
        }
    }

    @Test("a replay slower than any clock waits for ever instead of overflowing, and stops when asked")
    func slowestReplay() async {
        await #expect(processExitsWith: .success) {
            for factor in [1e-30, 1e-300, Double.leastNonzeroMagnitude] {
                var pacer = ReplayPacer(pace: .accelerated(by: factor))
                let first = GPSDReport.fix(Location.sample(second: 1))
                #expect(pacer.delay(before: first, now: .zero) == nil)
                let delay = pacer.delay(before: .fix(Location.sample(second: 2)), now: .zero)
                #expect(delay == .never, "\(factor)")
            }
            let recording = Array((ReportLines.tpv(second: 1) + "\n" + ReportLines.tpv(second: 2) + "\n").utf8)
            let gps = AsyncLocationManager(recording: recording, named: "slow", pace: .accelerated(by: 1e-30))
            let fix = try await gps.requestLocation(timeout: .seconds(60))
            #expect(fix.timestamp == GPSDTime.date(from: ReportLines.time(1)))
            await gps.stop()
        }
    }

    @Test("a reconnect policy of any size gives a delay of at most a century, at once")
    func hugeReconnectPolicies() async {
        await #expect(processExitsWith: .success) {
            let policies = [
                ReconnectPolicy(initialDelay: .seconds(Int64.max), maximumDelay: .seconds(Int64.max)),
                ReconnectPolicy(initialDelay: .seconds(1), multiplier: 10, maximumDelay: .seconds(Int64.max)),
                ReconnectPolicy(initialDelay: .seconds(1), multiplier: .infinity, maximumDelay: .seconds(Int64.max) * 4),
                ReconnectPolicy(initialDelay: .seconds(-5), multiplier: .nan, maximumDelay: .seconds(-1), jitter: .nan),
                ReconnectPolicy(initialDelay: .milliseconds(1), multiplier: 1.0000001, jitter: .infinity),
            ]
            for policy in policies {
                for failures in [Int.min, -1, 0, 1, 2, 1_000, Int.max] {
                    for unit in [-1, 0, 0.5, 1, 2, .nan, .infinity] {
                        let delay = policy.delay(afterFailures: failures, unit: unit)
                        #expect(delay >= .zero && delay <= .never, "\(policy) \(failures) \(unit): \(delay)")
                    }
                }
            }
            #expect(ReconnectPolicy(initialDelay: .seconds(-5)).delay(afterFailures: 3, unit: 0.5) == .zero)
            #expect(ReconnectPolicy(multiplier: .nan, jitter: 0).delay(afterFailures: 5, unit: 0.5) == .milliseconds(250))
        }
    }

    @Test("a manager whose policy starts at Int64.max seconds waits its cap; without a cap it ends the watch")
    func managerWithAnEndlessFirstDelay() async {
        await #expect(processExitsWith: .success) {
            let lost = LocationError(.connectionLost, "connection to gpsd lost")
            let capped = ManagerRig(reconnect: ReconnectPolicy(initialDelay: .seconds(Int64.max), jitter: 0))
            capped.manager.startUpdatingLocation()
            capped.source.send(.connected)
            capped.source.send(.failed(lost))
            #expect(capped.manager.status == .reconnecting(attempt: 2, after: .seconds(8), because: lost), "the cap")

            let endless = ManagerRig(reconnect: ReconnectPolicy(initialDelay: .seconds(Int64.max),
                                                                maximumDelay: .seconds(Int64.max)))
            endless.manager.startUpdatingLocation()
            endless.source.send(.connected)
            endless.source.send(.failed(lost))
            endless.manager.delegateQueue.sync {}
            #expect(endless.delegate.errors == [lost], "a century's wait is no reconnection")
            #expect(endless.manager.status == .stopped, "status")
            #expect(!endless.source.isRunning, "no session")
        }
    }

    @Test("timeouts of any size, negative ones too, never reach a clock that cannot hold them")
    func timeoutsOfAnySize() async {
        await #expect(processExitsWith: .success) {
            let huge = [Duration.seconds(-1e19), .seconds(1e19), .seconds(Int64.min), .seconds(Int64.max) * 4]
            for timeout in huge {
                SystemManagerClock().schedule(after: timeout) {}
                #expect(Syscall.pollTimeout(timeout) == (timeout < .zero ? 0 : -1))
            }
            let recording = Array((ReportLines.tpv(second: 1) + "\n").utf8)
            let gps = AsyncLocationManager(recording: recording, named: "one fix", pace: .realTime)
            gps.manager.requestTimeout = .seconds(-1e19)
            gps.manager.staleTimeout = .seconds(-1e19)
            #expect(gps.manager.requestTimeout == .zero && gps.manager.staleTimeout == .zero, "a negative one is none")
            gps.manager.requestTimeout = .seconds(1e19)
            #expect(gps.manager.requestTimeout == .never, "a century or more is never")
            // A fix, or the timeout that passed at once: either way an answer, not a signal.
            do {
                _ = try await gps.requestLocation(timeout: .seconds(-1e19))
            } catch let error as LocationError {
                #expect(error.code == .timedOut)
            }
            await gps.stop()
        }
    }

    @Test("the status says a negative or enormous delay in words")
    func statusOfOddDurations() async {
        await #expect(processExitsWith: .success) {
            let error = LocationError(.connectionLost, "lost")
            func text(_ delay: Duration) -> String {
                LocationStatus.reconnecting(attempt: 2, after: delay, because: error).description
            }
            #expect(text(.milliseconds(-500)) == "reconnecting in -0.5 s (attempt 2): lost")
            #expect(text(.milliseconds(-2250)) == "reconnecting in -2.25 s (attempt 2): lost")
            #expect(text(.seconds(Int64.max)) == "reconnecting in 9.223372036854776e+18 s (attempt 2): lost")
            #expect(text(.seconds(Int64.min)) == "reconnecting in -9.223372036854776e+18 s (attempt 2): lost")
            #expect(text(.seconds(Int64.max) * 8).hasPrefix("reconnecting in 7.378697629483821e+19 s"))
            #expect(LocationStatus.stale(silentFor: .milliseconds(1)).description == "no report for 0.001 s")
        }
    }

    @Test("a NavSatFix with a covariance that is not 3×3 is refused when decoded, and never read out of bounds")
    func shortCovariance() async {
        await #expect(processExitsWith: .success) {
            let good = NavSatFix(Location.sample(second: 1))
            let json = try #require(String(data: try JSONEncoder().encode(good), encoding: .utf8))
            #expect(try JSONDecoder().decode(NavSatFix.self, from: Data(json.utf8)) == good)
            for covariance in ["[]", "[1]", "[1,0,0,0,1,0,0,0]", "[1,0,0,0,1,0,0,0,1,0]", "[-1,0,0,0,1,0,0,0,1]"] {
                let short = json.replacing(#/"positionCovariance":\[[^\]]*\]/#, with: "\"positionCovariance\":\(covariance)")
                #expect(short != json)
                #expect(throws: DecodingError.self, "\(covariance)") {
                    try JSONDecoder().decode(NavSatFix.self, from: Data(short.utf8))
                }
            }
            var edited = good
            edited.positionCovariance = []
            #expect(edited.eastVariance == nil && edited.northVariance == nil && edited.upVariance == nil)
        }
    }

    @Test("a NavSatFix is decoded only with a possible position and time")
    func implausibleNavSatFix() async {
        await #expect(processExitsWith: .success) {
            let json = String(decoding: try JSONEncoder().encode(NavSatFix(Location.sample(second: 1))), as: UTF8.self)
            for (pattern, replacement) in [(#/"latitude":[^,]*/#, #""latitude":91"#),
                                           (#/"longitude":[^,]*/#, #""longitude":-180.5"#),
                                           (#/"altitude":[^,]*/#, #""altitude":1e300"#),
                                           (#/"timestamp":[^,]*/#, #""timestamp":1e300"#),
                                           (#/"timestamp":[^,]*/#, #""timestamp":-1e300"#)] {
                let bad = json.replacing(pattern, with: replacement)
                #expect(bad != json)
                #expect(throws: DecodingError.self, "\(replacement)") {
                    try JSONDecoder().decode(NavSatFix.self, from: Data(bad.utf8))
                }
            }
        }
    }

    @Test("a report whose class is empty is no report the package reads, whatever members follow")
    func emptyClassName() async {
        await #expect(processExitsWith: .success) {
            // Found by Scripts/fuzz decoder (Fuzz/FailCases/decoder/empty-class-name): the empty class was taken
            // for "not yet seen", and a later one-byte member's value was cut as a string's, out of range.
            let decoder = try ReportDecoder()
            #expect(decoder.decode(Array(#"{"class":"","nSat":12,"uSat":9}"#.utf8)) == .other)
            #expect(decoder.decode(Array(#"{"class":"","a":"","b":1,"c":[]}"#.utf8)) == .other)
            let shape = #"{"class":"","uSat":9}"#.utf8.withContiguousStorageIfAvailable { JSONScan.reportShape($0) }
            #expect(shape == JSONScan.ReportShape(className: "", isFlat: true, nestsOnlySatellites: true))
        }
    }
}

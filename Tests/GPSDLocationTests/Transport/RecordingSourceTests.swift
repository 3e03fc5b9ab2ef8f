import Foundation
@testable import GPSDCore
import GPSDLocation
import GPSDTestSupport
import Testing

/// Replays of small recordings written to a temporary directory. The replay runs on a thread of its own; tests
/// wait for what the manager reports (the end of the recording, a callback), never for time.
@Suite("RecordingSource", .timeLimit(.minutes(1)))
struct RecordingSourceTests {
    // MARK: Recordings

    /// 2025-06-01T12:00:00Z.
    private static let epoch = 1_748_779_200.0

    /// A gpsd TPV line with a 3D fix `second` seconds after the epoch.
    private static func tpv(second: Int, latitude: Double = 52.5, longitude: Double? = nil) -> String {
        let lon = longitude ?? 13.25 + Double(second) * 0.0001
        return #"{"class":"TPV","device":"/dev/ttyUSB0","mode":3,"time":"\#(time(second))","ept":0.005,"#
            + #""lat":\#(latitude),"lon":\#(lon),"altHAE":80.5,"altMSL":40.25,"epx":3.0,"epy":4.0,"eph":6.5,"#
            + #""epv":9.5,"track":90.0,"speed":7.0,"climb":0.0,"eps":0.5,"epc":1.0}"#
    }

    private static func time(_ second: Int) -> String {
        Date(timeIntervalSince1970: epoch + Double(second)).formatted(
            Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    private static let header = [
        #"{"class":"VERSION","release":"3.22","rev":"3.22","proto_major":3,"proto_minor":14}"#,
        #"{"class":"DEVICES","devices":[{"class":"DEVICE","path":"/dev/ttyUSB0","driver":"NMEA0183","#
            + #""activated":"2025-06-01T12:00:00.000Z","flags":1,"native":0,"bps":4800,"parity":"N","stopbits":1,"#
            + #""cycle":1.00}]}"#,
        #"{"class":"WATCH","enable":true,"json":true,"nmea":false,"raw":0,"scaled":false,"timing":false,"#
            + #""split24":false,"pps":false}"#,
    ]

    private static let sky = #"{"class":"SKY","device":"/dev/ttyUSB0","time":"2025-06-01T12:00:01.000Z","#
        + #""hdop":1.1,"satellites":[{"PRN":5,"el":31.0,"az":86.0,"ss":40.0,"used":true},"#
        + #"{"PRN":7,"el":12.0,"az":280.0,"ss":0.0,"used":false},{"PRN":13,"el":44.0,"az":53.0,"ss":45.0,"used":true}]}"#

    private static let noFix = #"{"class":"TPV","device":"/dev/ttyUSB0","mode":1}"#

    /// A directory of its own under the temporary directory, removed by `remove()`.
    private struct Scratch {
        let directory = FileManager.default.temporaryDirectory.appending(path: "GPSDLocationTests-\(UUID())")

        func write(_ text: String, name: String = "recording.gpsd.json") throws -> URL {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let url = directory.appending(path: name)
            try Data(text.utf8).write(to: url)
            return url
        }

        func remove() { try? FileManager.default.removeItem(at: directory) }
    }

    // MARK: Running a replay

    private enum Signal: Sendable {
        case delegate(DelegateEvent)
        case finished
        case failed(LocationError)
    }

    /// A manager on `url` and what it reports: delegate calls and, from an observer, the end of the source.
    private struct Replay {
        let manager: LocationManager
        let delegate: DelegateRecorder
        let signals: AsyncStream<Signal>

        init(_ url: URL) {
            let (signals, continuation) = AsyncStream.makeStream(of: Signal.self, bufferingPolicy: .unbounded)
            manager = LocationManager(recording: url, pace: .asFastAsPossible)
            delegate = DelegateRecorder { _, event in continuation.yield(.delegate(event)) }
            manager.delegate = delegate
            _ = manager.addObserver { observation in
                switch observation {
                case .sessionEnded(nil): continuation.yield(.finished)
                case .sessionEnded(let error?): continuation.yield(.failed(error))
                case .satellites, .status: break
                }
            }
            self.signals = signals
        }

        /// Waits for the first signal that `isLast` accepts, then for the delegate queue to be empty.
        func wait(until isLast: (Signal) -> Bool) async {
            for await signal in signals where isLast(signal) { break }
            manager.delegateQueue.sync {}
        }

        /// Waits for the end of the recording: its last report, or a failure.
        func waitForEnd() async {
            await wait { signal in
                switch signal {
                case .finished, .failed: true
                case .delegate: false
                }
            }
        }
    }

    // MARK: Replays

    @Test func fixesArriveInOrderAndGarbageIsCounted() async throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        let garbage = ["hello", #"{"broken"#, "$GPGGA,120005.00,,,,,0,00,99.99,,,,,,*6B", #"{"foo":1}"#]
        let lines = Self.header + [
            Self.noFix,
            garbage[0],
            Self.tpv(second: 1),
            Self.sky,
            "",
            garbage[1],
            Self.tpv(second: 2),
            Self.tpv(second: 2),        // a repeat of the epoch: not delivered again
            garbage[2],
            Self.tpv(second: 3) + "\r", // CRLF
            garbage[3],
            Self.tpv(second: 4),
        ]
        let url = try scratch.write(lines.joined(separator: "\n") + "\n")
        let replay = Replay(url)
        replay.manager.startUpdatingLocation()
        await replay.waitForEnd()

        let locations = replay.delegate.locations
        #expect(locations.count == 4)
        #expect(locations.map(\.timestamp) == (1...4).map { Date(timeIntervalSince1970: Self.epoch + Double($0)) })
        #expect(locations.map(\.coordinate.longitude) == (1...4).map { 13.25 + Double($0) * 0.0001 })
        let first = try #require(locations.first)
        #expect(first.coordinate.latitude == 52.5)
        #expect(first.altitude == 40.25)
        #expect(first.ellipsoidalAltitude == 80.5)
        #expect(first.horizontalAccuracy == 6.5)
        #expect(first.speed == 7)
        #expect(first.device == "/dev/ttyUSB0")
        #expect(replay.delegate.errors.isEmpty)
        #expect(replay.manager.skippedLineCount == garbage.count)
        #expect(replay.manager.satellites == nil, "the replay's SKY counts are forgotten when it ends")
        #expect(replay.manager.location == locations.last)
        #expect(replay.manager.server == nil)
    }

    @Test func lastLineWithoutNewlineIsReplayed() async throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        let url = try scratch.write([Self.tpv(second: 1), Self.tpv(second: 2)].joined(separator: "\n"))
        let replay = Replay(url)
        replay.manager.startUpdatingLocation()
        await replay.waitForEnd()
        #expect(replay.delegate.locations.map(\.timestamp) == [1, 2].map { Date(timeIntervalSince1970: Self.epoch + $0) })
        #expect(replay.manager.skippedLineCount == 0)
    }

    /// A request for gpsd's held fix wakes a session's thread; a replay has no such fix, and its pacing must not
    /// be cut short by the wake. The pace counts from the first fix, which the replay reads after `opened`, so the
    /// second fix is due 0.2 s after `opened` at the earliest: a lower bound a busy machine cannot break, as it can
    /// only make fixes later. (Counted from the first fix's arrival instead, a late first callback shortened the gap.)
    @Test func aHeldFixRequestDoesNotHurryAPacedReplay() async throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        let url = try scratch.write([Self.tpv(second: 1), Self.tpv(second: 2)].joined(separator: "\n") + "\n")
        let (arrivals, sink) = AsyncStream.makeStream(of: ContinuousClock.Instant.self)
        let opened = ContinuousClock.now
        let session = try RecordingSource(url: url, pace: .accelerated(by: 5)).openSession { events in
            for case .report(.fix) in events { sink.yield(.now) }
        }
        defer { session.close() }
        var iterator = arrivals.makeAsyncIterator()
        _ = try #require(await iterator.next())
        session.requestHeldFix()   // wakes the thread while it waits out the recorded second (0.2 s at 5×)
        let second = try #require(await iterator.next())
        #expect(opened.duration(to: second) >= .milliseconds(200), "\(opened.duration(to: second))")
    }

    @Test func loopedLogStartsOver() async throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        let seconds = [1, 2, 3, 4, 5, 1, 2, 3]   // 4 s back: more than the 2 s a late fix may be
        let url = try scratch.write(seconds.map { Self.tpv(second: $0) }.joined(separator: "\n") + "\n")
        let replay = Replay(url)
        replay.manager.startUpdatingLocation()
        await replay.waitForEnd()
        #expect(replay.delegate.locations.map(\.timestamp) == seconds.map { Date(timeIntervalSince1970: Self.epoch + Double($0)) })
    }

    @Test func requestLocationDeliversTheFirstFixOnce() async throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        let url = try scratch.write(([Self.noFix] + (1...50).map { Self.tpv(second: $0) }).joined(separator: "\n") + "\n")
        let replay = Replay(url)
        replay.manager.requestLocation()
        await replay.wait { signal in
            if case .delegate = signal { return true }
            return false
        }
        #expect(replay.delegate.events.count == 1)
        #expect(replay.delegate.locations.map(\.timestamp) == [Date(timeIntervalSince1970: Self.epoch + 1)])
    }

    @Test func requestLocationOnARecordingWithoutFixesIsLocationUnknown() async throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        let url = try scratch.write((Self.header + [Self.noFix, Self.sky, Self.noFix]).joined(separator: "\n") + "\n")
        let replay = Replay(url)
        replay.manager.requestLocation()
        await replay.waitForEnd()
        #expect(replay.delegate.events.count == 1)
        let error = try #require(replay.delegate.errors.first)
        #expect(error.code == .locationUnknown)
        #expect(error.bestLocation == nil)
    }

    @Test func missingFileIsInvalidRecording() async throws {
        let scratch = Scratch()
        let url = scratch.directory.appending(path: "missing.gpsd.json")
        let replay = Replay(url)
        replay.manager.startUpdatingLocation()
        await replay.waitForEnd()
        #expect(replay.delegate.events.count == 1)
        let error = try #require(replay.delegate.errors.first)
        #expect(error.code == .invalidRecording)
        #expect(error.message.contains("missing.gpsd.json"))
        #expect(replay.manager.location == nil)
    }

    @Test(arguments: [
        ("", 0),
        ("\n\n\r\n", 0),
        ("hello\nworld\n{\"foo\":1}\n", 3),
        ("$GPRMC,120001.00,A,5230.0000,N,01315.0000,E,0.0,0.0,010625,,,A*6C\nnot json", 2),
    ])
    func recordingWithoutReportsIsInvalid(text: String, skipped: Int) async throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        let url = try scratch.write(text)
        let replay = Replay(url)
        replay.manager.startUpdatingLocation()
        await replay.waitForEnd()
        #expect(replay.delegate.events.count == 1)
        let error = try #require(replay.delegate.errors.first)
        #expect(error.code == .invalidRecording)
        #expect(replay.manager.skippedLineCount == skipped)
    }
}

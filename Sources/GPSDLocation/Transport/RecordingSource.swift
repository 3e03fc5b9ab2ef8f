import Foundation
import Glibc

/// How fast a recording is replayed.
public enum ReplayPace: Sendable, Hashable {
    /// At the pace the fixes were recorded, from their timestamps.
    case realTime
    /// `factor` times faster than recorded (2 = twice as fast).
    case accelerated(by: Double)
    /// Every report at once, as fast as they can be parsed.
    case asFastAsPossible

    /// Recorded seconds per real second; `nil` for as fast as possible.
    var speed: Double? {
        switch self {
        case .realTime: 1
        case .accelerated(let factor): factor > 0 && factor.isFinite ? factor : nil
        case .asFastAsPossible: nil
        }
    }
}

/// Replays a recording: a file of gpsd JSON reports, one per line, as `gpspipe -w` writes them. Each line is
/// parsed by libgps (`gps_unpack`); lines that are not reports are skipped and counted.
final class RecordingSource: LocationSource {
    let url: URL
    let pace: ReplayPace
    private let thread = SourceThread(name: "GPSDLocation replay")

    init(url: URL, pace: ReplayPace) {
        self.url = url
        self.pace = pace
    }

    func start(_ handler: @escaping @Sendable (SourceEvent) -> Void) {
        let (url, pace) = (url, pace)
        thread.start { run in Self.replay(url: url, pace: pace, run: run, handler: handler) }
    }

    func stop() { thread.stop() }

    func poll() {}

    private static func replay(url: URL, pace: ReplayPace, run: SourceThread.Run, handler: @Sendable (SourceEvent) -> Void) {
        guard let file = fopen(url.path, "r") else {
            let reason = String(cString: strerror(errno))
            handler(.failed(LocationError(.invalidRecording, "cannot read recording \(url.path): \(reason)")))
            return
        }
        defer { fclose(file) }
        let decoder = ReportDecoder()
        var reports = 0
        var clock = ReplayClock(speed: pace.speed)
        var line: UnsafeMutablePointer<CChar>?
        var capacity = 0
        defer { free(line) }

        while !run.isStopped {
            let length = getline(&line, &capacity, file)
            guard length >= 0, let line else { break }
            let bytes = UnsafeRawBufferPointer(start: line, count: length)
            let trimmed = bytes.prefix { $0 != UInt8(ascii: "\n") && $0 != UInt8(ascii: "\r") }
            guard !trimmed.isEmpty else { continue }
            guard let report = decoder.decode(trimmed) else {
                handler(.skippedLine)
                continue
            }
            reports += 1
            if let delay = clock.delay(before: report) {
                _ = run.wake.wait(readable: nil, timeout: delay)
                if run.isStopped { return }
            }
            handler(.report(report))
        }
        guard !run.isStopped else { return }
        if reports == 0 {
            handler(.failed(LocationError(.invalidRecording, "no gpsd reports in recording \(url.path)")))
        } else {
            handler(.finished)
        }
    }
}

/// Paces a replay by the recorded fix times against the monotonic clock.
struct ReplayClock {
    let speed: Double?
    private var origin: (recorded: Date, real: ContinuousClock.Instant)?
    private var last: Date?

    init(speed: Double?) { self.speed = speed }

    /// How long to wait before handing `report` on, or `nil` for no wait.
    mutating func delay(before report: GPSDReport) -> Duration? {
        guard let speed, let time = report.time else { return nil }
        let now = ContinuousClock.now
        // A jump backwards (a looped log, a week-rollover guess) or a gap over an hour starts a new origin.
        if let last, time < last || time.timeIntervalSince(last) > 3600 { origin = nil }
        last = time
        guard let origin else {
            self.origin = (time, now)
            return nil
        }
        let target = origin.real + .seconds(time.timeIntervalSince(origin.recorded) / speed)
        return target > now ? now.duration(to: target) : nil
    }
}

extension GPSDReport {
    /// The fix time of a TPV, with or without a fix.
    var time: Date? {
        switch self {
        case .fix(let location): location.timestamp
        case .noFix(_, let time): time
        default: nil
        }
    }
}

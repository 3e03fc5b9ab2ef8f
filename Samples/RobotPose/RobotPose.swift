import ArgumentParser
import Foundation
import GPSDLocation
import SampleSupport
import Synchronization

/// Publishes NavSatFix-style messages at a fixed rate (5 Hz by default) from whatever rate the receiver has
/// (1 Hz, say), one NDJSON line each. Each message says how old its fix is, which receiver it came from (gpsd's
/// device, when known) and whether it is the fix's first publication (`new`) or a `repeat`; a fix older than
/// --stale-after is never published as a position: the message is then `stale` (or `none` before any fix) with
/// ROS's STATUS_NO_FIX.
@main
struct RobotPose: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Publish NavSatFix messages at a fixed rate.")

    @OptionGroup var source: FixSource

    @Option(help: "Messages per second.")
    var rate: Double = 5

    @Option(help: ArgumentHelp("A fix that reached us longer ago than this is stale.", valueName: "seconds"))
    var staleAfter: Double = 2

    @Option(help: "Stop after this many messages.")
    var count: Int?

    /// The longest wait an option takes, in seconds.
    static let century = 100 * 365.25 * 86_400

    func validate() throws {
        guard rate >= 0.001, rate <= 1000 else { throw ValidationError("--rate must be from 0.001 to 1000") }
        guard staleAfter > 0, staleAfter <= Self.century else {
            throw ValidationError("--stale-after must be a positive number of seconds, at most a century")
        }
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
    }

    func run() async throws {
        let gps = try source.makeManager()
        let latest = NewestFix()
        let period = Duration.seconds(1 / rate)
        let stale = Duration.seconds(staleAfter)
        let limit = count
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for try await fix in gps.updates() { latest.set(fix) }
                throw CleanExit.message("the source ended")
            }
            group.addTask {
                let clock = ContinuousClock()
                var deadline = clock.now
                var publisher = Publisher(staleAfter: stale)
                while limit.map({ publisher.sequence < $0 }) ?? true {
                    deadline = deadline.advanced(by: period)
                    if deadline < clock.now { deadline = clock.now }   // a late tick is not made up for: no bursts
                    try await clock.sleep(until: deadline)
                    printLine(publisher.message(for: latest.value))
                }
            }
            // Whichever ends first (the count reached, the source ended, an error) ends the other.
            do {
                try await group.next()
            } catch let exit as CleanExit {
                report("RobotPose", "\(exit)")
            }
            group.cancelAll()
        }
    }
}

/// The newest fix, shared by the reading task and the publishing one. A later report of the same epoch
/// replaces it but keeps the epoch's first arrival, so ages count from the first report.
final class NewestFix: Sendable {
    private let fix = Mutex<Location?>(nil)
    var value: Location? { fix.withLock { $0 } }
    func set(_ new: Location) {
        fix.withLock { current in
            var new = new
            if let current, current.timestamp == new.timestamp, current.device == new.device {
                new.arrival = current.arrival
            }
            current = new
        }
    }
}

/// Turns the newest fix into the next message, remembering which epoch it published last. An epoch is one fix
/// time of one receiver: gpsd may send it again, completed by a later sentence; that is the same fix, not a
/// new one (its age counts from its first report: ``NewestFix``).
struct Publisher {
    let staleAfter: Duration
    private(set) var sequence = 0
    private var published: (timestamp: Date?, device: String?)?

    init(staleAfter: Duration) { self.staleAfter = staleAfter }

    mutating func message(for fix: Location?) -> String {
        sequence += 1
        var fields: [(String, String)] = [
            ("seq", "\(sequence)"), ("published", JSONText.quoted(GPSDTime.string(from: .now) ?? "")),
        ]
        guard let fix, let arrival = fix.arrival?.instant else {
            fields.append(("state", JSONText.quoted("none")))
            return object(fields + navSatFields(.noFix()))
        }
        let isNew = published.map { $0.timestamp != fix.timestamp || $0.device != fix.device } ?? true
        published = (fix.timestamp, fix.device)
        let age = arrival.duration(to: .now)
        let seconds = Double(age.components.seconds) + Double(age.components.attoseconds) * 1e-18
        fields.append(("age", String(format: "%.3f", seconds)))
        // Whatever gpsd or a recording calls the receiver, escaped: a name can hold quotes or a terminal's commands.
        if let device = fix.device { fields.append(("device", JSONText.quoted(device))) }
        if age > staleAfter {
            fields.append(("state", JSONText.quoted("stale")))
            fields.append(("stamp", GPSDTime.string(from: fix.timestamp).map(JSONText.quoted) ?? "null"))
            return object(fields + navSatFields(.noFix(at: fix.timestamp)))
        }
        fields.append(("state", JSONText.quoted(isNew ? "new" : "repeat")))
        return object(fields + navSatFields(NavSatFix(fix)))
    }

    private func navSatFields(_ message: NavSatFix) -> [(String, String)] {
        var fields: [(String, String)] = [
            ("stamp", message.timestamp.flatMap(GPSDTime.string(from:)).map(JSONText.quoted) ?? "null"),
            ("status", "\(message.status.rawValue)"), ("service", "\(message.service.rawValue)"),
        ]
        if message.status != .noFix {
            fields += [("latitude", "\(message.latitude)"), ("longitude", "\(message.longitude)"),
                       ("altitude", message.altitude.map { "\($0)" } ?? "null")]
        }
        fields += [("position_covariance", "[" + message.positionCovariance.map { "\($0)" }.joined(separator: ",") + "]"),
                   ("position_covariance_type", "\(message.positionCovarianceType.rawValue)")]
        return fields
    }

    private func object(_ fields: [(String, String)]) -> String {
        // A key given twice (stamp, for a stale fix) keeps its first value.
        var seen = Set<String>()
        let unique = fields.filter { seen.insert($0.0).inserted }
        return "{" + unique.map { JSONText.quoted($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
    }
}

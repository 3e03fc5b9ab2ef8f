import ArgumentParser
import Foundation
import GPSDLocation
import SampleSupport

/// Publishes NavSatFix-style messages at a fixed rate (5 Hz by default) from whatever rate the receiver has
/// (1 Hz, say), one NDJSON line each. Each tick polls the manager's `snapshot`: one consistent reading of the
/// newest fix and heading with their ages at that instant, the status and whether each is current, taken without a
/// task hop; a live timeline (`liveUpdates()`) keeps gpsd's watch on meanwhile. Each message says how old its fix is
/// (how long ago the receiver measured it), which receiver it came from (gpsd's device, when known), the source's
/// condition (`LocationStatus.name`), and whether it is the fix's first publication (`new`) or a `repeat`; a fix the
/// snapshot calls stale (fix lost, receiver gone, gpsd silent or away), or older than --stale-after, is never
/// published as a position: the message is then `stale` (or `none` before any fix) with ROS's STATUS_NO_FIX. The
/// first message after the source restarted (gpsd came back) says `"restarted":true`. Where gpsd reports a heading
/// (a compass, a gyro or a second antenna), a position message carries the orientation too: the heading, and ROS's
/// quaternion (x, y, z, w) of the yaw in its ENU frame (REP 103: 0 facing east, counter-clockwise), from a heading
/// that is current and measured no longer than --stale-after from the fix; never from the course over ground.
@main
struct RobotPose: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Publish NavSatFix messages at a fixed rate.")

    @OptionGroup var source: FixSource

    @Option(help: "Messages per second.")
    var rate: Double = 5

    @Option(help: ArgumentHelp("A fix the receiver measured longer ago than this is stale.", valueName: "seconds"))
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
        let period = Duration.seconds(1 / rate)
        let stale = Duration.seconds(staleAfter)
        let limit = count
        let signals = try endingSignals(program: "RobotPose")
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await signal in signals { throw CleanExit.message("ended by \(signalName(signal))") }
            }
            group.addTask {
                // Keeps gpsd's watch on, through its restarts, and ends with the source (a recording's end).
                for try await _ in gps.liveUpdates() {}
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
                    printLine(publisher.message(for: gps.manager.snapshot))
                }
            }
            // Whichever ends first (the count reached, the source ended, a signal, an error) ends the others.
            do {
                try await group.next()
            } catch let exit as CleanExit {
                report("RobotPose", "\(exit)")
            }
            group.cancelAll()
        }
    }
}

/// Turns the newest snapshot into the next message, remembering which epoch it published last. An epoch is one fix
/// time of one receiver: gpsd may send it again, completed by a later sentence; that is the same fix, not a
/// new one.
struct Publisher {
    let staleAfter: Duration
    private(set) var sequence = 0
    private var published: (timestamp: Date, device: String?)?
    /// The sessions connected as of the last message (``LocationSnapshot/connections``).
    private var connections = 0

    init(staleAfter: Duration) { self.staleAfter = staleAfter }

    mutating func message(for snapshot: LocationSnapshot) -> String {
        sequence += 1
        var fields: [(String, String)] = [
            ("seq", "\(sequence)"), ("published", JSONText.quoted(GPSDTime.string(from: .now) ?? "")),
        ]
        // A session connected since the last message, after an earlier one had: the source restarted.
        let restarted = snapshot.connections > max(connections, 1)
        connections = snapshot.connections
        fields.append(("condition", JSONText.quoted(snapshot.status.name)))
        if restarted { fields.append(("restarted", "true")) }
        guard let fix = snapshot.location else {
            fields.append(("state", JSONText.quoted("none")))
            return object(fields + navSatFields(.noFix()))
        }
        // How long before the snapshot the receiver measured it, in seconds to the millisecond, as published;
        // unknown (null) is never fresh. Judged as published, so that a message never says 1.500 s and stale under
        // --stale-after 1.5.
        let age = snapshot.locationAge.map { ($0 / .milliseconds(1)).rounded() / 1000 }
        fields.append(("age", age.map { String(format: "%.3f", $0) } ?? "null"))
        // Whatever gpsd or a recording calls the receiver, escaped: a name can hold quotes or a terminal's commands.
        if let device = fix.device { fields.append(("device", JSONText.quoted(device))) }
        guard !snapshot.isStale, let age, age <= staleAfter / .seconds(1) else {
            fields.append(("state", JSONText.quoted("stale")))
            fields.append(("stamp", GPSDTime.string(from: fix.timestamp).map(JSONText.quoted) ?? "null"))
            return object(fields + navSatFields(.noFix(at: fix.timestamp)))
        }
        let isNew = published.map { $0.timestamp != fix.timestamp || $0.device != fix.device } ?? true
        published = (fix.timestamp, fix.device)
        fields.append(("state", JSONText.quoted(isNew ? "new" : "repeat")))
        let heading = snapshot.isHeadingStale ? nil : snapshot.heading
        return object(fields + navSatFields(NavSatFix(fix)) + orientationFields(heading, near: fix))
    }

    /// The heading and ROS's orientation quaternion of its yaw, if `heading` was measured within ``staleAfter``
    /// of `fix` (by the receiver's clock); none otherwise.
    private func orientationFields(_ heading: Heading?, near fix: Location) -> [(String, String)] {
        guard let heading, let time = heading.timestamp,
              abs(time.timeIntervalSince(fix.timestamp)) <= staleAfter / .seconds(1) else { return [] }
        // REP 103: yaw 0 faces east and grows counter-clockwise; a compass's 0 faces north and grows clockwise.
        let yaw = (90 - heading.trueHeading) * .pi / 180
        let quaternion = [0, 0, sin(yaw / 2), cos(yaw / 2)].map { String(format: "%.9f", $0) }
        return [("heading", String(format: "%.3f", heading.trueHeading)),
                ("orientation", "[" + quaternion.joined(separator: ",") + "]")]
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

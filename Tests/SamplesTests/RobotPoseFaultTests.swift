import Foundation
import GPSDLocation
import GPSDTestSupport
import Testing

extension SampleTests {
    /// RobotPose through what a robot meets: a lost fix, gpsd stalled, gpsd restarted, the receiver removed. One
    /// process through all four, against two gpsds in turn on one port; its messages read back and judged.
    @Suite("RobotPose through faults")
    struct RobotPoseFaultTests {
        typealias Message = RobotPoseTests.Message

        /// The seconds of the track each stamp stands for.
        static let seconds = Dictionary(uniqueKeysWithValues: (0..<200).map { (Sample.time($0), $0) })

        /// The stamp of a message line, without decoding it (a wait's predicate runs for each piece of output).
        static func stamp(of line: Substring) -> String? {
            guard let start = line.firstRange(of: #""stamp":""#)?.upperBound,
                  let end = line[start...].firstIndex(of: "\"") else { return nil }
            return String(line[start..<end])
        }

        /// Whether a message after the first `skipping` is `state`, of a fix from `second` on.
        static func has(_ state: String, from second: Int, skipping: Int = 0) -> @Sendable (String) -> Bool {
            { output in
                output.split(separator: "\n").dropFirst(skipping).contains { line in
                    line.contains(#""state":"\#(state)""#) && (stamp(of: line).flatMap { seconds[$0] } ?? -1) >= second
                }
            }
        }

        static func lineCount(_ process: CLIProcess) -> Int { process.stdoutSoFar.split(separator: "\n").count }

        @Test("a lost fix, a stall, a restart, the receiver removed: stale while each lasts, fresh after, the restart marked")
        func throughTheFaults() async throws {
            let port = freeLoopbackPort()
            try #require(port != 0)
            try await withScratchDirectory("pose-faults") { scratch in
                // Three sentences an epoch, 0.25 s apart: the receiver's time runs a little ahead of ours, so a fix
                // that arrives on time has an age near zero. Fixes, four epochs without, fixes again.
                let first = try Sample.log("pose-first", fixes: Array(0..<6) + Array(10..<100), noFix: Array(6..<10),
                                           in: scratch)
                let secondLog = try Sample.log("pose-second", fixes: Array(100..<106), in: scratch)
                var process: CLIProcess?
                var (stalled, resumed, restarted) = (0, 0, 0)
                try await GPSFake.run(logs: [first], cycle: 0.25, once: true, lingerAfterEnd: 60, waitForClient: true,
                                      port: port) { fake in
                    let pose = try await Sample.start("RobotPose", ["--rate", "10", "--stale-after", "1.5", fake.server])
                    process = pose
                    let recovered = await pose.waitForOutput(timeout: .seconds(40), Self.has("new", from: 11))
                    if !recovered { Issue.record("fixes after the lost fix: \(pose.stdoutSoFar.suffix(600))\n\(await fake.diagnosis())") }
                    try #require(recovered)
                    // The stall: gpsd stopped until a message has gone stale, while the receiver's sentences pile up.
                    stalled = Self.lineCount(pose)
                    try fake.suspend(.gpsd)
                    let stale = await pose.waitForOutput(timeout: .seconds(20), Self.has("stale", from: 0, skipping: stalled))
                    resumed = Self.lineCount(pose)
                    try fake.resume(.gpsd)
                    try #require(stale, "stale while gpsd stalls: \(pose.stdoutSoFar.suffix(600))")
                    let last = Self.seconds[Self.stamp(of: pose.stdoutSoFar.split(separator: "\n").last ?? "") ?? ""] ?? 0
                    let fresh = await pose.waitForOutput(timeout: .seconds(20), Self.has("new", from: last + 1, skipping: resumed))
                    try #require(fresh, "fresh after the stall: \(pose.stdoutSoFar.suffix(600))")
                    restarted = Self.lineCount(pose)
                }   // gpsd killed halfway through its log; another comes on the same port
                let pose = try #require(process)
                defer { pose.terminate() }
                try await GPSFake.run(logs: [secondLog], cycle: 0.25, once: true, lingerAfterEnd: 60, waitForClient: true,
                                      port: port) { fake in
                    // The log's end: gpsd says the receiver is gone.
                    let sawFixes = Self.has("new", from: 105, skipping: restarted)
                    let gone = await pose.waitForOutput(timeout: .seconds(40)) {
                        sawFixes($0) && $0.contains(#""condition":"deviceGone""#)
                    }
                    if !gone { Issue.record("the receiver removed: \(pose.stdoutSoFar.suffix(600))\n\(await fake.diagnosis())") }
                }
                pose.terminate()
                let result = await pose.finish(deadline: .seconds(20))
                let messages = try result.stdoutLines.map { try JSONDecoder().decode(Message.self, from: Data($0.utf8)) }
                let second = { (message: Message) in message.stamp.flatMap { Self.seconds[$0] } ?? -1 }
                try #require(messages.count > restarted)
                #expect(messages.map(\.seq) == Array(1...messages.count), "every message numbered, none skipped")

                // Never a position from a fix the timeline calls stale or that is older than --stale-after.
                for message in messages {
                    switch message.state {
                    case "new", "repeat":
                        #expect(message.condition == "fix" && message.status == 0 && (message.age ?? .infinity) <= 1.5,
                                "seq \(message.seq)")
                    case "stale":
                        #expect(message.status == -1 && message.latitude == nil, "seq \(message.seq)")
                        #expect(message.condition != "fix" || (message.age ?? .infinity) > 1.5,
                                "stale only when no fixes come, or by age: seq \(message.seq)")
                    default:
                        #expect(message.state == "none" && message.stamp == nil, "seq \(message.seq)")
                    }
                }
                // The lost fix: stale with the last fix (of second 5) while the receiver has none, fresh after.
                let lost = messages[..<stalled].filter { $0.condition == "fixLost" || $0.condition == "waitingForFix" }
                    .filter { second($0) >= 0 }
                #expect(!lost.isEmpty && lost.allSatisfy { $0.state == "stale" && second($0) == 5 },
                        "\(lost.map { "\($0.seq) \($0.state) \(second($0))" })")
                #expect(messages[..<stalled].contains { $0.state == "new" && second($0) >= 10 })

                // The stall: stale by age, gpsd still saying fix (silent for less than the stale timeout); the age
                // of one fix growing; then fresh fixes, younger than before.
                let stall = messages[stalled..<resumed].filter { $0.state == "stale" }
                #expect(!stall.isEmpty && Set(stall.map(second)).count == 1, "one fix goes stale: \(stall.map(second))")
                #expect(stall.allSatisfy { ($0.age ?? 0) > 1.5 }, "\(stall.map(\.age))")
                #expect(zip(stall, stall.dropFirst()).allSatisfy { ($0.age ?? 0) <= ($1.age ?? 0) }, "the age grows")
                let afterStall = messages[resumed..<restarted]
                #expect(afterStall.contains { $0.state == "new" && second($0) > (stall.first.map(second) ?? .max) })

                // The restart: stale while gpsd is away, marked once when the new gpsd connected, then its fixes.
                // `restarted` was counted before the first gpsd was killed: the messages after it begin with those
                // of that gpsd's last fixes (published while it was being stopped, or still in the pipe then), new
                // ones among them. So the messages are told apart by what they say: the condition, when the sample
                // knew gpsd was away; the mark, when the new one connected; a fix's stamp, which gpsd it came from
                // (the second log's epochs are from 100 on, the first's before).
                let marks = messages.indices.filter { messages[$0].restarted == true }
                #expect(marks.count == 1 && marks[0] >= restarted, "one restart, after gpsd was killed: \(marks)")
                let firstNew = messages.indices.first { $0 >= restarted && messages[$0].state == "new" && second(messages[$0]) >= 100 }
                #expect(marks.first.map { mark in firstNew.map { mark <= $0 } ?? false } == true,
                        "marked before the new gpsd's first fix")
                #expect(messages[restarted...].contains { $0.state == "stale" && ["reconnecting", "connecting"].contains($0.condition) },
                        "gpsd away is stale")
                // From the first message that knew gpsd away to the mark, no position; after the mark, every fix
                // published as new is one of the new gpsd's, none of the killed one's.
                let away = messages.indices.first { $0 >= restarted && ["reconnecting", "connecting"].contains(messages[$0].condition) }
                if let away, let mark = marks.first {
                    #expect(away < mark && messages[away..<mark].allSatisfy { $0.state == "stale" },
                            "stale from gpsd's going away to the restart: \(messages[away..<max(away, mark)].map { "\($0.seq) \($0.state)" })")
                }
                if let mark = marks.first {
                    let fresh = messages[mark...].filter { $0.state == "new" }.map(second)
                    #expect(!fresh.isEmpty && fresh.allSatisfy { $0 >= 100 }, "after the restart, the new gpsd's fixes: \(fresh)")
                }

                // The receiver removed: after its last fix, stale with that fix, until the end.
                let gone = try #require(messages.firstIndex { $0.condition == "deviceGone" })
                #expect(messages[gone...].allSatisfy { $0.state == "stale" && second($0) == 105 && $0.condition != "fix" },
                        "\(messages[gone...].map { "\($0.state) \($0.condition ?? "-") \(second($0))" })")
            }
        }
    }
}

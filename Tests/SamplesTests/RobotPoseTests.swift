import Foundation
import GPSDLocation
import GPSDTestSupport
import Testing

extension SampleTests {
    @Suite("RobotPose")
    struct RobotPoseTests {
        struct Message: Decodable {
            var seq: Int
            var state: String
            /// The source's condition (`LocationStatus.name`) once the timeline has told one.
            var condition: String?
            var restarted: Bool?
            var age: Double?
            var stamp: String?
            var status: Int
            var latitude: Double?
            var longitude: Double?
            var position_covariance: [Double]
            var position_covariance_type: Int
        }

        @Test("a fixed rate above the receiver's: each fix new once, then repeats with their age; stale once gpsd is gone")
        func publishesAtAFixedRate() async throws {
            try await withScratchDirectory("pose") { scratch in
                // About 1 Hz: three sentences an epoch, 0.3 s apart.
                let log = try Sample.log("pose", fixes: Array(0..<60), in: scratch)
                let process = try await GPSFake.run(logs: [log], cycle: 0.3, once: false, waitForClient: true) { fake in
                    let process = try await Sample.start("RobotPose", ["--rate", "5", "--stale-after", "1.5", fake.server])
                    let fixes = await process.waitForOutput(timeout: .seconds(40)) {
                        Set($0.split(separator: "\n").filter { $0.contains(#""state":"new""#) }).count >= 5
                    }
                    if !fixes { Issue.record("5 fixes published: \(process.stdoutSoFar)\n\(await fake.diagnosis())") }
                    return process
                }   // gpsd stops here: its fixes go stale
                // What was published while gpsd ran; a hiccup of the machine may have made some of it stale too.
                let whileGPSDRan = process.stdoutSoFar.split(separator: "\n").count
                let stale = await process.waitForOutput(timeout: .seconds(30)) {
                    $0.split(separator: "\n").dropFirst(whileGPSDRan).contains { $0.contains(#""state":"stale""#) }
                }
                #expect(stale, "stale messages once gpsd is gone: \(process.stdoutSoFar.suffix(600))")
                process.terminate()
                let result = await process.finish(deadline: .seconds(30))
                let messages = try result.stdoutLines.map { try JSONDecoder().decode(Message.self, from: Data($0.utf8)) }
                try #require(!messages.isEmpty)

                #expect(messages.map(\.seq) == Array(1...messages.count), "every message numbered, none skipped")
                let published = messages.filter { $0.state == "new" || $0.state == "repeat" }
                // Each fix is new exactly once, before any repeat of it; its repeats are older, never fresher.
                var seen: [String: Double] = [:]
                for message in published {
                    let stamp = try #require(message.stamp), age = try #require(message.age)
                    #expect((message.state == "new") == (seen[stamp] == nil), "seq \(message.seq): \(message.state) of \(stamp)")
                    if let previous = seen[stamp] { #expect(age >= previous, "seq \(message.seq)") }
                    seen[stamp] = age
                    #expect(age >= 0 && age <= 1.5, "a published fix is never older than --stale-after: \(age)")
                    #expect(message.status == 0 && message.latitude == 52.5 && message.condition == "fix", "seq \(message.seq)")
                    // Approximated from gpsd's estimates; unknown (all zeros) for a report without any (a log's first RMC).
                    #expect(message.position_covariance.count == 9)
                    #expect(message.position_covariance_type == 1
                            || (message.position_covariance_type == 0 && message.position_covariance.allSatisfy { $0 == 0 }))
                }
                // Faster than the receiver: more messages than fixes (a busy machine may skip ticks, not add them).
                let newCount = published.filter { $0.state == "new" }.count
                #expect(newCount >= 5 && published.count > newCount, "\(published.count) messages for \(newCount) fixes")
                // Stale: no position, ROS's STATUS_NO_FIX, the age of the fix it no longer publishes.
                let staleMessages = messages.filter { $0.state == "stale" }
                #expect(!staleMessages.isEmpty)
                for message in staleMessages {
                    #expect(message.status == -1 && message.latitude == nil && message.position_covariance_type == 0)
                    // Stale because no fixes come (gpsd gone), or because its fix is older than --stale-after.
                    #expect(message.condition != "fix" || (message.age ?? .infinity) >= 1.5,
                            "seq \(message.seq): \(message.condition as Any), age \(message.age as Any)")
                }
                // Once stale after gpsd went away, it stays so: nothing fresh after that first stale message.
                let firstStale = try #require(messages.indices.first { $0 >= whileGPSDRan && messages[$0].state == "stale" })
                #expect(messages[firstStale...].allSatisfy { $0.state == "stale" })
            }
        }
    }
}

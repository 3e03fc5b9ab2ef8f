import Foundation
import GPSDLocation
import GPSDTestSupport
import Testing

/// `whereami --follow` writes each epoch once, complete, as soon as it is complete: once a receiver's last two
/// epochs brought the same number of reports, the epoch that reaches that number is written at once, not when the
/// next epoch's first report arrives. A fake gpsd on a loopback port sends three epochs and then nothing more.
@Suite("whereami --follow writes a complete epoch at once", .timeLimit(.minutes(2)))
struct FollowEpochTests {
    /// The first report of an epoch as gpsd sends it for RMC: a 2D fix without altitude.
    private static func partial(_ second: Int) -> String {
        #"{"class":"TPV","device":"/dev/ttyUSB0","mode":2,"time":"\#(ReportLines.time(second))","ept":0.005,"#
            + #""lat":52.5,"lon":\#(13.4 + Double(second) * 0.0001),"track":90.0,"speed":7.0}"#
    }

    @Test func theThirdEpochIsWrittenWithNoFourthSent() async throws {
        let gpsd = try FakeGPSD()
        let process = try await CLIProcess.start(["127.0.0.1:\(gpsd.port)", "--follow", "--format", "json"])
        let client = await gpsd.nextClient()
        await client.waitUntilReceived { $0.contains("?WATCH=") }
        client.send(ReportLines.devices)
        for second in 0..<3 {
            client.send(Self.partial(second))
            client.send(ReportLines.tpv(second: second))   // GGA adds the altitude
        }
        // Epochs 0 and 1 are written when the next begins; epoch 2 when its second report arrives. Nothing more is
        // sent: were epoch 2 held until the next epoch, its line would never come (60 s is only a guard).
        let three = await process.waitForOutput(timeout: .seconds(60)) { $0.split(separator: "\n").count >= 3 }
        #expect(three, "three lines, without a fourth epoch: \(process.stdoutSoFar)")
        let lines = process.stdoutSoFar.split(separator: "\n")
        #expect(lines.count == 3, "each epoch once")
        #expect(lines.allSatisfy { $0.contains(#""altitude":40.25"#) && $0.contains(#""fix":"3D""#) },
                "each epoch's most complete record: \(lines)")
        process.terminate()
        _ = await process.finish()
        gpsd.stop()
    }
}

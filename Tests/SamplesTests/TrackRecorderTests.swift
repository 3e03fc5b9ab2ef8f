import Foundation
import GPSDLocation
import GPSDTestSupport
import Testing

#if canImport(FoundationXML)
import FoundationXML
#endif

extension SampleTests {
    @Suite("TrackRecorder")
    struct TrackRecorderTests {
        /// A GPX document as XMLParser reads it: its root's attributes and its segments' points.
        final class GPXReader: NSObject, XMLParserDelegate {
            struct Point { var latitude: Double?; var longitude: Double?; var time: String?; var elevation: Double? }
            var root: (name: String, attributes: [String: String])?
            var namespace: String?
            var segments: [[Point]] = []
            var closedTrack = false
            private var text = ""

            func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                        attributes: [String: String] = [:]) {
                if root == nil { root = (name, attributes); namespace = namespaceURI }
                text = ""
                switch name {
                case "trkseg": segments.append([])
                case "trkpt":
                    segments[segments.count - 1].append(
                        Point(latitude: attributes["lat"].flatMap(Double.init), longitude: attributes["lon"].flatMap(Double.init)))
                default: break
                }
            }

            func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

            func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
                switch name {
                case "time": segments[segments.count - 1][segments[segments.count - 1].count - 1].time = text
                case "ele": segments[segments.count - 1][segments[segments.count - 1].count - 1].elevation = Double(text)
                case "trk": closedTrack = true
                default: break
                }
            }
        }

        @Test("a valid GPX 1.1 track, split where the fix was lost, every point checked; closed by the signal",
              arguments: ["SIGTERM", "SIGINT"])
        func recordsUntilSignalled(signal: String) async throws {
            try await withScratchDirectory("track") { scratch in
                // 10 s of fix, 4 s without, then fix again.
                let log = try Sample.log("track", fixes: Array(0..<10) + Array(14..<40), noFix: Array(10..<14), in: scratch)
                let output = scratch.appendingPathComponent("track.gpx")
                try await GPSFake.run(logs: [log], cycle: 0.05, once: true, lingerAfterEnd: 60, waitForClient: true) { fake in
                    let process = try await Sample.start("TrackRecorder", ["-o", output.path, fake.server])
                    let recorded = await Sample.waitForFiles(in: scratch) { $0.contains { $0.contains(Sample.time(25)) } }
                    if !recorded { Issue.record("no point of \(Sample.time(25)): \(await fake.diagnosis())") }
                    if signal == "SIGTERM" { process.terminate() } else { process.interrupt() }
                    let result = await process.finish(deadline: .seconds(20))
                    #expect(result.status == 0 && !result.endedBySignal, "\(result)")
                    #expect(result.stderr.contains("points in 2 segments"), "\(result.stderr)")
                }

                let reader = GPXReader()
                let parser = XMLParser(data: try Data(contentsOf: output))
                parser.shouldProcessNamespaces = true
                parser.delegate = reader
                #expect(parser.parse(), "XMLParser: \(parser.parserError.map { "\($0)" } ?? "")")
                #expect(reader.root?.name == "gpx" && reader.root?.attributes["version"] == "1.1")
                #expect(reader.namespace == "http://www.topografix.com/GPX/1/1")
                #expect(reader.closedTrack)
                try #require(reader.segments.count == 2, "one segment before the loss, one after: \(reader.segments.map(\.count))")
                var seconds: [[Int]] = []
                for segment in reader.segments {
                    var inSegment: [Int] = []
                    for point in segment {
                        let time = try #require(point.time.flatMap(GPSDTime.date(from:)), "every point has its time")
                        let second = Int(time.timeIntervalSince(NMEA.Track.start).rounded())
                        #expect(point.latitude == 52.5)
                        #expect(abs((point.longitude ?? 0) - Sample.longitude(second)) < 1e-6, "point of second \(second)")
                        #expect(point.elevation == 34.5)
                        inSegment.append(second)
                    }
                    seconds.append(inSegment)
                }
                // Nothing lost: each segment is every epoch from its first to its last.
                #expect(seconds[0] == Array(0..<10), "\(seconds[0])")
                #expect(seconds[1].first == 14 && seconds[1].contains(25), "\(seconds[1])")
                #expect(seconds[1] == Array(14...(seconds[1].last ?? 14)), "\(seconds[1])")
            }
        }

        @Test("the README's command, replaying the drive as fast as possible, writes the same track on every run")
        func theReadmeCommandWritesTheSameOnEveryRun() async throws {
            try await withScratchDirectory("track-runs") { scratch in
                let output = scratch.appendingPathComponent("drive.gpx")
                var runs: [(output: String, gpx: Data)] = []
                for _ in 1...5 {
                    let result = try await Sample.start("TrackRecorder", [
                        "--replay", Sample.recording.path, "--speed", "0", "-o", output.path,
                    ]).finish(deadline: .seconds(60))
                    #expect(result.status == 0, "\(result)")
                    runs.append((result.stdout + result.stderr, try Data(contentsOf: output)))
                }
                let reader = GPXReader()
                let parser = XMLParser(data: runs[0].gpx)
                parser.delegate = reader
                #expect(parser.parse())
                #expect(reader.segments.map(\.count) == [(try ExpectedFix.load("drive.expected.json")).count])
                for (run, next) in runs.enumerated().dropFirst() {
                    #expect(next.output == runs[0].output && next.gpx == runs[0].gpx, "run \(run + 1): \(next.output)")
                }
            }
        }
    }
}

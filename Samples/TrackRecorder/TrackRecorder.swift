import ArgumentParser
import Foundation
import GPSDLocation
import Logging
import SampleSupport
import ServiceLifecycle

/// Records a GPX 1.1 track: one `<trkpt>` per epoch, a new `<trkseg>` whenever the fix was lost: consecutive
/// fixes more than --gap seconds of fix time apart (1.5 s by default: one missed epoch of a 1 Hz receiver). Points are written as they come; on
/// SIGINT (Ctrl-C) or SIGTERM, or at the end of a recording, the document is closed and the file flushed, so it
/// is always valid GPX after a clean stop.
@main
struct TrackRecorder: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Record fixes as a GPX 1.1 track.")

    @OptionGroup var source: FixSource

    @Option(name: .shortAndLong, help: ArgumentHelp("The GPX file to write (replaced if it exists).", valueName: "file"))
    var output: String

    @Option(help: ArgumentHelp("Seconds of fix time without a fix that end a segment.", valueName: "seconds"))
    var gap: Double = 1.5

    @Option(help: "The track's name.")
    var name = "TrackRecorder"

    func validate() throws {
        guard gap > 0, gap.isFinite else { throw ValidationError("--gap must be a positive number of seconds") }
    }

    func run() async throws {
        let file = try GPXFile(path: output, trackName: name)
        let service = RecorderService(gps: try source.makeManager(), file: file, gap: gap)
        var logger = Logger(label: "TrackRecorder")
        logger.logLevel = .warning
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: service, successTerminationBehavior: .gracefullyShutdownGroup)],
            logger: logger))
        // SIGINT, SIGTERM or SIGHUP shut the group down gracefully, within a second whatever the output does.
        let ender = try onEndingSignal(program: "TrackRecorder") { await group.triggerGracefulShutdown() }
        defer { ender.cancel() }
        try await group.run()
        report("TrackRecorder", "wrote \(file.pointCount) points in \(file.segmentCount) segment\(file.segmentCount == 1 ? "" : "s") to \(output)")
    }
}

struct RecorderService: Service {
    let gps: AsyncLocationManager
    let file: GPXFile
    let gap: Double

    func run() async throws {
        defer { file.close() }
        // Fix times, not the status stream, decide: an epoch without a fix (the receiver lost it, gpsd was away)
        // leaves a gap between the fixes on each side of it, whenever they arrive.
        // A graceful shutdown (Ctrl-C, SIGTERM) stops the manager: the stream ends, and every point it gave is
        // in the file.
        let fixes = gps.updates(delivery: .oncePerEpoch, bufferingPolicy: .unbounded)
        try await withGracefulShutdownHandler {
            var previous: Date?
            for try await fix in fixes {
                if let previous, abs(fix.timestamp.timeIntervalSince(previous)) > gap { file.endSegment() }
                file.append(fix)
                previous = fix.timestamp
            }
        } onGracefulShutdown: {
            Task { await gps.stop() }   // the handler cannot wait; the loop ends once the stop has ended it
        }
    }
}

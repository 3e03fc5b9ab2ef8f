import ArgumentParser
import Foundation
import GPSDLocation
import SampleSupport

/// Watches circular regions given on the command line and prints each region's initial state, then every
/// entry and exit as it happens, one line each (text, or NDJSON with --json).
@main
struct GeofenceWatcher: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print enter and exit events for circular regions.",
        discussion: """
            A region is NAME:LATITUDE,LONGITUDE,RADIUS (degrees, metres), e.g. --region square:52.5219,13.4132,60. \
            A fix decides a region only when its whole accuracy circle is clear of a band of --hysteresis metres \
            around the border, and only if it is accurate to --max-accuracy metres.
            """)

    @OptionGroup var source: FixSource

    @Option(name: .customLong("region"), help: ArgumentHelp("A region to watch (repeatable).", valueName: "name:lat,lon,radius"))
    var regions: [RegionArgument]

    @Option(help: "Metres of the band around each border that decides nothing.")
    var hysteresis: Double = 10

    @Option(help: "Fixes less accurate than this many metres decide nothing.")
    var maxAccuracy: Double = 50

    @Flag(help: "Print NDJSON events instead of text.")
    var json = false

    func validate() throws {
        guard !regions.isEmpty else { throw ValidationError("give at least one --region") }
        guard Set(regions.map(\.region.identifier)).count == regions.count else {
            throw ValidationError("two regions have the same name")
        }
        guard hysteresis >= 0, hysteresis.isFinite else { throw ValidationError("--hysteresis must be 0 or more") }
        guard maxAccuracy > 0 else { throw ValidationError("--max-accuracy must be positive") }
    }

    func run() async throws {
        let gps = try source.makeManager()
        let monitor = GeofenceMonitor(hysteresis: hysteresis, maximumAccuracy: maxAccuracy)
        let events = monitor.events(bufferingPolicy: .unbounded)
        for argument in regions { monitor.add(argument.region) }
        let json = json
        // SIGINT, SIGTERM or SIGHUP stop the manager: the fixes end, and the events decided are printed.
        let stopper = try onEndingSignal(program: "GeofenceWatcher") { await gps.stop() }
        defer { stopper.cancel() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await event in events { printLine(json ? Self.jsonLine(event) : Self.textLine(event)) }
            }
            // Until the fixes end (a recording's end), then the events already decided are printed.
            try await monitor.monitor(gps.updates())
            monitor.finish()
            try await group.waitForAll()
        }
    }

    static func textLine(_ event: GeofenceMonitor<ContinuousClock>.Event) -> String {
        let time = event.location.flatMap { GPSDTime.string(from: $0.timestamp) } ?? "-"
        let change = event.isInitial ? "initially \(event.state.rawValue)"
            : event.previousState == .unknown ? "is \(event.state.rawValue)"   // first decided: no crossing seen
            : event.state == .inside ? "entered" : "left"
        return "\(time)  \(event.identifier)  \(change)"
    }

    static func jsonLine(_ event: GeofenceMonitor<ContinuousClock>.Event) -> String {
        var fields = [("region", JSONText.quoted(event.identifier)), ("state", JSONText.quoted(event.state.rawValue)),
                      ("previous", JSONText.quoted(event.previousState.rawValue)), ("initial", "\(event.isInitial)")]
        if let location = event.location { fields.append(("location", location.jsonText)) }
        return "{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
    }
}

/// `name:lat,lon,radius`, checked as the library checks a region.
struct RegionArgument: ExpressibleByArgument, Sendable {
    let region: GeofenceRegion

    init?(argument: String) {
        guard let colon = argument.lastIndex(of: ":") else { return nil }
        let numbers = argument[argument.index(after: colon)...].split(separator: ",").compactMap { Double($0) }
        let name = String(argument[..<colon])
        guard !name.isEmpty, numbers.count == 3,
              let region = try? GeofenceRegion(identifier: name, center: .init(latitude: numbers[0], longitude: numbers[1]),
                                               radius: numbers[2])
        else { return nil }
        self.region = region
    }
}

import ArgumentParser
import FoundationEssentials
import GPSDCore
import WhereAmICore

/// What each fuzz target does with one input: feed it to a parser the way outside bytes reach it, then hold what
/// came out to what must be true of it. A violation is a `fatalError` naming it (a precondition would lose its message in an optimized build), so libFuzzer keeps the
/// input (and the regression tests, which run these same checks over `Fuzz/Corpus` and `Fuzz/FailCases` in a
/// child process, fail).
package enum FuzzCheck: String, CaseIterable, Sendable {
    /// gpsd's lines (or a recording's) through ``ReportDecoder``, split as a session splits them.
    case decoder
    /// JSON through `Location`'s and `NavSatFix`'s `Decodable`, and what decodes back through their encoders.
    case json
    /// `host[:port[:device]]` through ``GPSDServer/init(parsing:)``.
    case server
    /// whereami's command line (arguments separated by NUL bytes) through its parser.
    case arguments

    /// Runs the check on one input.
    package func run(_ input: [UInt8]) {
        switch self {
        case .decoder: Self.decoder(input)
        case .json: Self.json(input)
        case .server: Self.server(input)
        case .arguments: Self.arguments(input)
        }
    }

    private static func require(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { fatalError(message()) }
    }

    // MARK: gpsd's lines

    /// One decoder for the whole run, as one session has one: what one line leaves in it must not spoil the next.
    nonisolated(unsafe) private static let reportDecoder = try! ReportDecoder()

    private static func decoder(_ input: [UInt8]) {
        var splitter = LineSplitter()
        input.withUnsafeBytes { bytes in
            splitter.append(bytes, line: decode, skipped: {})
        }
        splitter.finish(line: decode, skipped: {})
    }

    private static func decode(_ line: ArraySlice<UInt8>) {
        let decoder = reportDecoder
        let report = decoder.decode(line)
        require(decoder.bytesExamined <= 10 * line.count, "\(decoder.bytesExamined) bytes examined for a line of \(line.count)")
        for problem in decoder.problems {
            require(problem.value.unicodeScalars.allSatisfy(\.isPrintable), "a problem's value unescaped: \(problem)")
        }
        switch report {
        case .fix(let location):
            checkFix(location)
        case .poll(_, let reports):
            for case .fix(let location) in reports { checkFix(location) }
        case .deviation(let deviation, _, let time):
            checkFix(Location(coordinate: .init(latitude: 0, longitude: 0), deviation: deviation, timestamp: time ?? Self.epoch))
        case .sky(let view, _):
            if let problem = Plausibility.impossibility(of: view) { fatalError("\(problem): \(view)") }
        case .attitude(let heading, _):
            require((0..<360).contains(heading.trueHeading) && heading.magneticHeading.map { (0..<360).contains($0) } != false
                    && heading.pitch.map(Plausibility.pitch.contains) != false && heading.roll.map(Plausibility.roll.contains) != false
                    && heading.timestamp.map(Plausibility.isPlausible) != false, "heading \(heading)")
        case .noFix(_, let time?):
            require(Plausibility.isPlausible(time), "a time of \(time.timeIntervalSince1970) s")
        case .noFix, .fixWithoutTime, .version, .devices, .device, .error, .other, nil:
            break
        }
    }

    /// A fix from gpsd: every value possible, and its JSON line reads back as a fix.
    private static func checkFix(_ location: Location) {
        if let problem = Plausibility.impossibility(of: location) { fatalError("\(problem): \(location)") }
        let line = location.jsonText
        guard let decoded = try? JSONDecoder().decode(Location.self, from: Data(line.utf8)) else {
            fatalError("jsonText does not decode: \(line)")
        }
        require(sameExceptTime(decoded, location), "jsonText decodes to another fix: \(line)")
    }

    // MARK: JSON

    private static func json(_ input: [UInt8]) {
        let data = Data(input)
        if let location = try? JSONDecoder().decode(Location.self, from: data) {
            if let problem = Plausibility.impossibility(of: location) { fatalError("decoded \(problem)") }
            // Its JSON, from either writer, reads back as the same fix (times to the millisecond), and again.
            let once = decodeOrFail(Location.self, Data(location.jsonText.utf8), "jsonText")
            require(sameExceptTime(once, location), "jsonText decodes to another fix: \(location.jsonText)")
            require(decodeOrFail(Location.self, Data(once.jsonText.utf8), "jsonText") == once, "not stable: \(once.jsonText)")
            let encoded = encodeOrFail(location)
            require(decodeOrFail(Location.self, encoded, "JSONEncoder's") == once, "JSONEncoder and jsonText differ")
            _ = location.description
            // Its NavSatFix round-trips too.
            let message = NavSatFix(location)
            require(decodeOrFail(NavSatFix.self, encodeOrFail(message), "NavSatFix") == message, "NavSatFix round trip")
        }
        if let sky = try? JSONDecoder().decode(SkyView.self, from: data) {
            if let problem = Plausibility.impossibility(of: sky) { fatalError("decoded \(problem)") }
            // Its JSON reads back as the same view (times to the millisecond).
            let again = decodeOrFail(SkyView.self, Data(sky.jsonText.utf8), "SkyView's jsonText")
            require(decodeOrFail(SkyView.self, Data(again.jsonText.utf8), "SkyView's jsonText") == again, "not stable: \(again.jsonText)")
            require(again.satellites == sky.satellites && again.count == sky.count, "jsonText decodes to another view: \(sky.jsonText)")
        }
        if let message = try? JSONDecoder().decode(NavSatFix.self, from: data) {
            require(message.positionCovariance.count == 9, "covariance of \(message.positionCovariance.count)")
            require(Plausibility.latitude.contains(message.latitude) && Plausibility.longitude.contains(message.longitude),
                    "position \(message.latitude), \(message.longitude)")
            _ = (message.eastVariance, message.northVariance, message.upVariance)
            require(decodeOrFail(NavSatFix.self, encodeOrFail(message), "NavSatFix") == message, "NavSatFix round trip")
        }
    }

    private static func decodeOrFail<T: Decodable>(_ type: T.Type, _ data: Data, _ what: String) -> T {
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch {
            fatalError("\(what) JSON does not decode: \(error) in \(String(decoding: data, as: UTF8.self))")
        }
    }

    private static func encodeOrFail(_ value: some Encodable) -> Data {
        do {
            return try JSONEncoder().encode(value)
        } catch {
            fatalError("a decoded value does not encode: \(error)")
        }
    }

    /// A time to give a value that has none: 2025-06-01T12:00:00Z.
    private static let epoch = Date(timeIntervalSince1970: 1_748_779_200)

    /// Equal but for the timestamp, which JSON carries to the millisecond.
    private static func sameExceptTime(_ a: Location, _ b: Location) -> Bool {
        var (a, b) = (a, b)
        if abs(a.timestamp.timeIntervalSince(b.timestamp)) > 0.000_5 + 1e-6 { return false }
        (a.timestamp, b.timestamp) = (Self.epoch, Self.epoch)
        return a == b
    }

    // MARK: gpsd's address

    private static func server(_ input: [UInt8]) {
        let text = String(decoding: input, as: UTF8.self)
        guard let server = try? GPSDServer(parsing: text) else { return }
        // What it prints reads back as the same server.
        do {
            let again = try GPSDServer(parsing: server.description)
            require(again == server, "'\(text)' is \(server), which reads back as \(again)")
        } catch {
            fatalError("'\(text)' is \(server), which does not read back: \(error)")
        }
    }

    // MARK: whereami's arguments

    /// Through the parser, and through the quick path the program takes for a plain command line
    /// (``WhereAmI/quickParse(_:)``): what the quick path reads, the parser reads to the same command.
    private static func arguments(_ input: [UInt8]) {
        let arguments = input.split(separator: 0, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        let quick = WhereAmI.quickParse(arguments)
        do {
            // What a run makes of the options first, without running it.
            let command = try WhereAmI.parse(arguments)
            _ = command.preflight()
            if let quick {
                require(String(describing: quick) == String(describing: command),
                        "\(arguments): the quick path read \(quick), the parser \(command)")
            }
        } catch {
            require(quick == nil, "\(arguments): the quick path read \(quick.map { String(describing: $0) } ?? ""), the parser refused it")
            _ = WhereAmI.fullMessage(for: error)
            _ = WhereAmI.exitCode(for: error)
        }
    }
}

import ArgumentParser
import Foundation
import Testing
@testable import WhereAmICore

/// The quick path a plain command line takes at start (``WhereAmI/quickParse(_:)``), held to swift-argument-parser's
/// parse: what it reads, the parser reads to the same command, every property compared through its description
/// (a property the quick path left unset reads `Option(*definition*)`); what it declines, the parser reads.
@Suite("whereami's quick path for plain command lines, against the parser")
struct QuickParseTests {
    /// The command `arguments` come to, as its description: through the quick path, and through the parser (`nil`
    /// when it throws: an error, the help, the version).
    static func both(_ arguments: [String]) -> (quick: String?, parsed: String?) {
        (WhereAmI.quickParse(arguments).map { String(describing: $0) },
         (try? WhereAmI.parse(arguments)).map { String(describing: $0) })
    }

    /// Command lines that use each option and flag, each form of a value, in several orders.
    static let plain: [[String]] = [
        [], ["localhost"], ["127.0.0.1:2947"], ["[::1]:2948:/dev/ttyACM0"],
        ["127.0.0.1:2947", "--max-age", "5", "--format", "json", "-q"],
        ["--max-age", "5", "--format=json", "-q", "127.0.0.1:2947"],
        ["--max-age=inf", "--timeout", "never", "--accuracy", "25.5"],
        ["-f", "--count", "10", "--distance", "2.5", "--interval", "0", "--format", "gpx"],
        ["--follow", "--count=3", "--timeout", "0.25", "rover.local:2948"],
        ["--demo", "--speed", "0", "-f", "--quiet"], ["--replay", "drive.gpsd.json", "--speed", "2.5"],
        ["--replay=/tmp/x y.json", "--format", "csv"], ["--sky"], ["--sky", "--format", "json", "--timeout", "3"],
        ["-w"], ["--watch", "localhost:2948"], ["-q", "--format", "geojson"], ["--count", "+5", "-f"],
        ["--max-age", "0"], ["--timeout", "1e3"], ["--format", "text"],
    ]

    @Test("plain command lines: the quick path reads each, to the parser's command", arguments: plain)
    func readsAsTheParserDoes(arguments: [String]) throws {
        let (quick, parsed) = Self.both(arguments)
        let read = try #require(quick, "the quick path declined \(arguments)")
        #expect(read == parsed)
        #expect(!read.contains("*definition*"))
    }

    /// Command lines the quick path leaves to the parser: the parser's own (help, version, completions), forms it
    /// does not read, and command lines the parser refuses.
    static let declined: [[String]] = [
        ["--help"], ["-h"], ["help"], ["--version"], ["--generate-completion-script", "bash"],
        ["---completion", "--", "positional@0", "0", "0"], ["--experimental-dump-help"],
        ["-fq"], ["-f", "-f"], ["-f", "--follow"], ["--format", "json", "--format", "csv"], ["--", "localhost"],
        ["--timeout", "-1"], ["--timeout=-1"], ["--max-age", "nan"], ["--timeout", "0"], ["--format", "xml"],
        ["--format", ""], ["--replay", ""], ["--quiet=yes"], ["-f=1"], ["--count", "0", "-f"], ["--count", "3"],
        ["--speed", "2"], ["--demo", "--replay", "x"], ["localhost", "--demo"], ["localhost", "gpsd.lan"], [""],
        ["-"], ["--follow", "--watch"], ["--watch", "--format", "json"], ["--sky", "-f"], ["--sky", "--format", "csv"],
        ["--max-age"], ["--format"], ["-x"], ["--unknown"], ["127.0.0.1:99999"], ["-\u{301}"],
    ]

    @Test("the parser's own options, other forms and refused command lines are left to the parser",
          arguments: declined)
    func declines(arguments: [String]) {
        #expect(WhereAmI.quickParse(arguments) == nil)
    }

    /// Pieces of command lines: every sequence of up to two is tried, and longer ones drawn from them.
    static let pieces: [String] = [
        "localhost", "h:1", "-f", "--follow", "-q", "-w", "--sky", "--demo", "--format", "json", "csv",
        "--format=text", "--count", "2", "--max-age", "inf", "-1", "--speed", "--replay", "", "--", "=",
    ]

    @Test("every sequence of up to two pieces, and 200 of three to six: what the quick path reads, the parser reads the same")
    func sequences() {
        var sequences: [[String]] = [[]]
        for first in Self.pieces {
            sequences.append([first])
            sequences += Self.pieces.map { [first, $0] }
        }
        // Longer ones, drawn the same way every run (a linear congruential generator, seeded).
        var state: UInt64 = 2947
        func draw(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        for _ in 0..<200 {
            sequences.append((0..<(3 + draw(4))).map { _ in Self.pieces[draw(Self.pieces.count)] })
        }
        var read = 0
        for arguments in sequences {
            let (quick, parsed) = Self.both(arguments)
            guard let quick else { continue }
            read += 1
            #expect(quick == parsed, "\(arguments)")
        }
        // Plenty of them are plain: the comparison is not empty.
        #expect(read > 50)
    }

    /// The options and flags the parser defines, from its `--experimental-dump-help` (ToolInfoV0), but its own
    /// (help, version).
    static func parserNames() throws -> Set<String> {
        struct Info: Decodable {
            struct Command: Decodable { var arguments: [Argument]? }
            struct Argument: Decodable {
                struct Name: Decodable { var kind: String; var name: String }
                var kind: String
                var names: [Name]?
            }
            var command: Command
        }
        let info = try JSONDecoder().decode(Info.self, from: Data(WhereAmI._dumpHelp().utf8))
        let names = (info.command.arguments ?? []).filter { $0.kind != "positional" }.flatMap { $0.names ?? [] }
            .map { ($0.kind == "short" ? "-" : "--") + $0.name }
        return Set(names).subtracting(["-h", "--help", "--version"])
    }

    @Test("the quick path knows every option and flag the command defines")
    func knowsEveryName() throws {
        let names = try Self.parserNames()
        #expect(names.isSuperset(of: ["--max-age", "-f", "--follow", "--format"]))
        for name in names {
            #expect(QuickName(spelled: Substring(name)) != nil, "the quick path does not know \(name)")
            let used = Self.plain.contains { $0.contains { $0 == name || $0.hasPrefix(name + "=") } }
            #expect(used, "no plain command line in these tests uses \(name)")
        }
    }
}

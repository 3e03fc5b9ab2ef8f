import Foundation
import GPSDTestSupport
import Testing

extension WhereAmIProcessTests {
    /// Bad command lines: exit 64 and say what is wrong, before trying to reach gpsd.
    @Suite("whereami with bad usage", .timeLimit(.minutes(1)))
    struct UsageTests {
        struct Case: Sendable, CustomTestStringConvertible {
            var arguments: [String]
            /// Each must appear in the error message.
            var says: [String]
            var testDescription: String { "whereami " + arguments.joined(separator: " ") }
        }

        static let cases: [Case] = [
            Case(arguments: ["--bogus"], says: ["Unknown option '--bogus'"]),
            Case(arguments: ["--format", "xml"], says: ["'xml'", "--format", "text", "json", "csv", "geojson", "gpx"]),
            Case(arguments: ["--count", "0", "--follow"], says: ["--count must be at least 1"]),
            Case(arguments: ["--count", "3"], says: ["--count", "--follow"]),
            Case(arguments: ["--distance", "5"], says: ["--distance", "--follow"]),
            Case(arguments: ["--sky", "--format", "gpx"], says: ["--sky", "text or json", "gpx"]),
            Case(arguments: ["--sky", "--follow"], says: ["--sky", "--follow"]),
            Case(arguments: ["host:99999"], says: ["host:99999", "99999", "port"]),
            Case(arguments: ["[::1"], says: ["[::1", "]"]),
            Case(arguments: ["--timeout", "-1"], says: ["--timeout"]),
            Case(arguments: ["--timeout=-1"], says: ["--timeout must be a positive number"]),
            Case(arguments: ["--timeout", "0"], says: ["--timeout must be a positive number"]),
            Case(arguments: ["--timeout", "soon"], says: ["--timeout", "soon"]),
            Case(arguments: ["--max-age=-1"], says: ["--max-age"]),
            Case(arguments: ["--accuracy", "0"], says: ["--accuracy"]),
            Case(arguments: ["--speed=-2", "--demo"], says: ["--speed"]),
            Case(arguments: ["--demo", "--replay", "drive.json"], says: ["--replay", "--demo"]),
            Case(arguments: ["--demo", "localhost"], says: ["--demo"]),
            Case(arguments: ["localhost", "otherhost"], says: ["otherhost"]),
            Case(arguments: ["--watch", "--follow"], says: ["--follow", "--watch"]),
            Case(arguments: ["-w", "--timeout", "5"], says: ["--timeout", "--watch"]),
            Case(arguments: ["--watch", "--format", "json"], says: ["--format", "--watch"]),
            Case(arguments: ["--watch", "--count", "2"], says: ["--count", "--follow"]),
        ]

        @Test("exit 64 with a message on stderr naming the problem, and the usage line", arguments: cases)
        func badUsage(_ usage: Case) async throws {
            let result = try await whereami(usage.arguments, deadline: .seconds(30))
            #expect(result.status == 64 && !result.endedBySignal, "\(result)")
            #expect(result.stdout.isEmpty, "nothing on stdout: \(result.stdout)")
            #expect(result.stderr.hasPrefix("Error: "), "\(result.stderr)")
            #expect(result.stderr.contains("Usage: whereami"), "\(result.stderr)")
            for text in usage.says {
                #expect(result.stderr.contains(text), "mentions \(text): \(result.stderr)")
            }
            #expect(!result.stderr.contains("whereami: "), "fails before it starts (no status lines): \(result.stderr)")
        }

        @Test("--watch with standard output not a terminal: exit 64, saying so and what writes lines, before connecting")
        func watchNeedsATerminal() async throws {
            let result = try await whereami("--watch", "--demo")
            #expect(result.status == 64 && !result.endedBySignal, "\(result)")
            #expect(result.stdout.isEmpty, "nothing on stdout: \(result.stdout)")
            #expect(result.stderr == "whereami: --watch draws on a terminal, and standard output is not one "
                    + "(--follow writes lines)\n", "\(result)")
        }

        @Test("--help and --version exit 0 on stdout")
        func helpAndVersion() async throws {
            let help = try await whereami("--help")
            #expect(help.status == 0, "\(help)")
            for text in ["USAGE: whereami", "--follow", "--watch", "--format", "--replay", "--demo", "Exit status", "64", "69", "75"] {
                #expect(help.stdout.contains(text), "help mentions \(text)")
            }
            let version = try await whereami("--version")
            #expect(version.status == 0, "\(version)")
            #expect(version.stdout.wholeMatch(of: /\d+\.\d+\.\d+\n/) != nil, "a version: \(version.stdout)")
        }
    }
}

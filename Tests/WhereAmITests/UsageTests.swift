import Foundation
import GPSDTestSupport
import Testing
@testable import WhereAmICore

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
            Case(arguments: [":::"], says: ["':::'", "the device ':' begins with ':'", "host[:port[:device]]"]),
            Case(arguments: ["[::1]:"], says: ["'[::1]:'", "the port after ':' is empty"]),
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

        @Test("--help lists every exit status on a line of its own, its meaning aligned, at any width",
              arguments: [100, 80, 60])
        func helpExitStatuses(columns: Int) async throws {
            // argument-parser wraps --help to COLUMNS; bash sets it here as a user's shell or terminal would.
            let help = try await CLIProcess.start(
                ["-c", "COLUMNS=\(columns) \"$0\" --help", BuiltProduct.url("whereami").path],
                executable: URL(fileURLWithPath: "/bin/bash")).finish(deadline: .seconds(30))
            #expect(help.status == 0, "\(help)")
            let lines = help.stdout.components(separatedBy: "\n")
            let start = try #require(lines.firstIndex(of: "Exit status:"), "\(help.stdout)")
            let block = lines[(start + 1)...].prefix { !$0.isEmpty }
            #expect(block.allSatisfy { $0.count < columns }, "fits \(columns) columns: \(block)")
            // Each status starts a line; the lines after it, up to the next, are its meaning, under its first word.
            var read: [(status: String, meaning: String)] = []
            for line in block {
                if let entry = line.wholeMatch(of: #/  (\S+) +(.*)/#), !line.hasPrefix("   ") {
                    #expect(line.firstRange(of: entry.2)?.lowerBound == line.index(line.startIndex, offsetBy: 9),
                            "the meaning in the tenth column: \(line)")
                    read.append((String(entry.1), String(entry.2)))
                } else {
                    #expect(line.hasPrefix(String(repeating: " ", count: 9)) && line.dropFirst(9).first != " ",
                            "a meaning goes on under its first word: \(line)")
                    try #require(!read.isEmpty, "\(block)")
                    read[read.count - 1].meaning += " " + line.trimmingCharacters(in: .whitespaces)
                }
            }
            #expect(read.map(\.status) == ["0", "1", "64", "66", "69", "74", "75", "76", "128+n"], "\(block)")
            #expect(read.map(\.meaning) == ExitStatus.all.map(\.meaning), "\(block)")
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

import Foundation
import GPSDTestSupport
import Testing
@testable import WhereAmICore

extension WhereAmIProcessTests {
    /// The man page and shell completions in Documentation/ (made by Scripts/generate-docs): what they say of
    /// whereami, and that they say what the built whereami says of itself.
    @Suite("whereami's man page and completions", .timeLimit(.minutes(1)))
    struct DocumentationTests {
        static let documentation = packageDirectory.appendingPathComponent("Documentation")

        static func text(_ path: String) throws -> String {
            try String(contentsOf: documentation.appendingPathComponent(path), encoding: .utf8)
        }

        /// The mdoc lines of a section of the man page, from its `.Sh` line to the next.
        static func section(_ title: String, of page: String) -> [String] {
            let lines = page.split(separator: "\n").map(String.init)
            guard let start = lines.firstIndex(of: ".Sh \(title)") else { return [] }
            let rest = lines[(start + 1)...]
            return Array(rest.prefix { !$0.hasPrefix(".Sh ") })
        }

        @Test("the man page's synopsis is whereami [server] [options…]: no subcommand, and no block for one")
        func manPageSynopsis() throws {
            let page = try Self.text("man/whereami.1")
            let synopsis = Self.section("SYNOPSIS", of: page)
            try #require(synopsis.count > 2, "\(page)")
            #expect(Array(synopsis.prefix(2)) == [".Nm", ".Op Ar server"], "\(synopsis)")
            #expect(synopsis.dropFirst().allSatisfy { $0.hasPrefix(".Op ") }, "only optional parts: \(synopsis)")
            #expect(!page.contains("subcommand"), "argument-parser's help subcommand is not whereami's")
            #expect(!page.contains(".It Em help"), "no block for a help subcommand")
        }

        @Test("the man page says what whereami's --help says: every argument and its help, the discussion")
        func manPageIsCurrent() async throws {
            let page = try Self.text("man/whereami.1")
            let dump = try await whereami("--experimental-dump-help")
            try #require(dump.status == 0, "\(dump)")
            let info = try #require(try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [String: Any])
            let command = try #require(info["command"] as? [String: Any])
            let discussion = try #require(command["discussion"] as? String)
            // The exit statuses are the EXIT STATUS section's list instead (manPageExitStatus).
            for paragraph in discussion.components(separatedBy: "\n\n") where !paragraph.hasPrefix(ExitStatus.heading) {
                #expect(page.contains(paragraph), "the man page has: \(paragraph)")
            }
            #expect(!page.contains(ExitStatus.heading), "no exit statuses filled into the description")
            let arguments = try #require(command["arguments"] as? [[String: Any]])
            let synopsis = Self.section("SYNOPSIS", of: page)
            for argument in arguments where argument["shouldDisplay"] as? Bool == true {
                let abstract = try #require(argument["abstract"] as? String)
                #expect(page.contains("\n" + abstract + "\n"), "the man page has: \(abstract)")
                guard let name = (argument["preferredName"] as? [String: Any])?["name"] as? String else { continue }
                #expect(synopsis.contains { $0.hasPrefix(".Op Fl -\(name)") }, "--\(name) in \(synopsis)")
            }
        }

        @Test("the man page's EXIT STATUS lists every status and its meaning, as --help does")
        func manPageExitStatus() throws {
            let page = try Self.text("man/whereami.1")
            let section = Self.section("\"EXIT STATUS\"", of: page)
            var expected = [".Bl -tag -width 6n"]
            for (status, meaning) in ExitStatus.all { expected += [".It Sy \(status)", meaning] }
            expected.append(".El")
            #expect(section == expected, "\(section)")
        }

        @Test("the completion scripts are the ones the built whereami generates", arguments: ["bash", "zsh", "fish"])
        func completionsAreCurrent(shell: String) async throws {
            let generated = try await whereami("--generate-completion-script", shell)
            try #require(generated.status == 0, "\(generated)")
            #expect(try Self.text("completions/whereami.\(shell)") == generated.stdout,
                    "Scripts/generate-docs remakes Documentation/completions/whereami.\(shell)")
        }

        @Test("bash completes file names after --replay (and none after --speed)")
        func bashCompletesReplayFiles() async throws {
            let script = Self.documentation.appendingPathComponent("completions/whereami.bash").path
            // What bash does on Tab: COMP_* describe the line, the function gets the command, the word, the one before.
            let complete = #"""
                cd "$1" && source "$0"
                complete_after() {
                    COMP_WORDS=(whereami "$1" "$2"); COMP_CWORD=2; COMP_LINE="whereami $1 $2"; COMP_POINT=${#COMP_LINE}
                    COMPREPLY=(); _whereami whereami "$2" "$1"; echo "$1 $2: ${COMPREPLY[*]}"
                }
                complete_after --replay ""; complete_after --replay tr; complete_after --speed ""
                """#
            let result = try await withScratchDirectory("completion") { directory in
                for name in ["trip.gpsd.json", "drive.log"] {
                    try Data().write(to: directory.appendingPathComponent(name))
                }
                return try await CLIProcess.start(["-c", complete, script, directory.path],
                                                  executable: URL(fileURLWithPath: "/bin/bash")).finish(deadline: .seconds(30))
            }
            #expect(result.status == 0, "\(result)")
            let offered = Dictionary(uniqueKeysWithValues: result.stdoutLines.compactMap { line -> (String, Set<String>)? in
                guard let colon = line.firstIndex(of: ":") else { return nil }
                let words = line[line.index(after: colon)...].split(separator: " ").map(String.init)
                return (String(line[..<colon]), Set(words))
            })
            #expect(offered["--replay "] == ["trip.gpsd.json", "drive.log"], "\(result)")
            #expect(offered["--replay tr"] == ["trip.gpsd.json"], "\(result)")
            #expect(offered["--speed "] == [], "\(result)")
        }

        @Test("zsh and fish complete file names after --replay")
        func zshAndFishCompleteReplayFiles() throws {
            let zsh = try Self.text("completions/whereami.zsh").split(separator: "\n")
            let zshReplay = zsh.filter { $0.contains("'--replay[") }
            #expect(zshReplay.count == 1 && zshReplay.allSatisfy { $0.hasSuffix(":file:_files'") }, "\(zshReplay)")
            let fish = try Self.text("completions/whereami.fish").split(separator: "\n")
            let fishReplay = fish.filter { $0.contains("-l 'replay'") }
            // -r: takes a value; -F: file names (fish's `-f` alone would forbid them).
            #expect(fishReplay.count == 1 && fishReplay.allSatisfy { $0.hasSuffix(" -rF") }, "\(fishReplay)")
        }
    }
}

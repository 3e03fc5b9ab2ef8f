import Foundation
import GPSDTestSupport
import Testing

/// A tmux server of a test's own (its socket in a scratch directory, no configuration read), with one session
/// running an interactive shell (bash, or dash): a real terminal for `whereami --watch`, typed into with
/// `send-keys` and read with `capture-pane`.
struct Tmux {
    /// tmux, found on `PATH`; `nil` when it is not installed.
    static var path: String? {
        let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        return directories.map { "\($0)/tmux" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    let executable: URL
    let socket: String
    let session = "watch"

    /// The shell's prompt (`PS1`).
    static let prompt = "$ "

    /// Whether a row of `screen` is the shell's answer `text`: a row of its own, or after the prompt. It lands
    /// after the prompt when the line was typed before the shell had written its prompt: the terminal echoes
    /// typed text at once, and the shell, started late on a busy machine, writes its prompt after that echo.
    /// (Type the answer split by quotes, `echo shell-""ready`, so that the typed line is not taken for it.)
    static func answered(_ text: String, on screen: [String]) -> Bool {
        screen.contains { $0 == text || $0 == prompt + text }
    }

    /// The interactive shell in the session.
    enum Shell: String, Sendable {
        /// bash, which puts its own terminal modes back when a job stops.
        case bash = "bash --norc --noprofile -i"
        /// dash (Debian's /bin/sh), which does not: what a stopped job left of the terminal stays.
        case dash = "dash -i"
    }

    /// Runs `body` with a session of `columns` × `rows` running `shell` with a `$ ` prompt in `directory`, and kills
    /// the server afterwards however `body` ends. A missing tmux is a failure, not a skip:
    /// `Scripts/install-dependencies --tests` installs it.
    static func run<T>(
        columns: Int, rows: Int, in directory: URL, shell: Shell = .bash, _ body: (Tmux) async throws -> T
    ) async throws -> T {
        let path = try #require(Self.path, "tmux is not installed: Scripts/install-dependencies --tests installs it")
        let tmux = Tmux(executable: URL(fileURLWithPath: path), socket: directory.appendingPathComponent("tmux").path)
        let shell = "cd '\(directory.path)' && env -i PATH=/usr/bin:/bin HOME='\(directory.path)' TERM=tmux-256color "
            + "LANG=C.UTF-8 PS1='\(prompt)' \(shell.rawValue)"
        try await tmux.command(["new-session", "-d", "-s", tmux.session, "-x", "\(columns)", "-y", "\(rows)", shell])
        do {
            let result = try await body(tmux)
            await tmux.kill()
            return result
        } catch {
            await tmux.kill()
            throw error
        }
    }

    /// Runs a tmux command against this server; throws when it fails.
    @discardableResult
    func command(_ arguments: [String]) async throws -> String {
        let result = try await CLIProcess.start(["-u", "-f", "/dev/null", "-S", socket] + arguments, executable: executable)
            .finish(deadline: .seconds(20))
        guard result.status == 0, !result.endedBySignal else {
            throw TmuxError(description: "tmux \(arguments.joined(separator: " ")): \(result)")
        }
        return result.stdout
    }

    /// Types `text` and Enter in the session.
    func type(_ text: String) async throws {
        try await command(["send-keys", "-t", session, "-l", text])
        try await command(["send-keys", "-t", session, "Enter"])
    }

    /// Presses `key` (tmux's name for it: `q`, `C-c`).
    func press(_ key: String) async throws {
        try await command(["send-keys", "-t", session, key])
    }

    /// The rows the session's pane shows now, trailing spaces left out.
    func screen() async throws -> [String] {
        let text = try await command(["capture-pane", "-p", "-t", session])
        var rows = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if rows.last == "" { rows.removeLast() }   // the newline that ends the last row
        return rows
    }

    /// A format of the pane, as `display-message -p` says it: `#{alternate_on}`, `#{pane_pid}`.
    func display(_ format: String) async throws -> String {
        try await command(["display-message", "-p", "-t", session, format])
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Reads the screen until `condition` holds of it, and returns it; throws after `deadline` with the last one.
    /// A busy machine draws late: the deadline is generous, and only a failure waits that long.
    @discardableResult
    func waitForScreen(
        _ what: String, deadline: Duration = .seconds(60), _ condition: ([String]) -> Bool
    ) async throws -> [String] {
        let end = ContinuousClock.now + deadline
        while true {
            let screen = try await screen()
            if condition(screen) { return screen }
            guard ContinuousClock.now < end else {
                throw TmuxError(description: "no \(what) within \(deadline); the screen:\n" + screen.joined(separator: "\n"))
            }
            try await Task.sleep(for: .milliseconds(50))   // between two reads of the screen, not a wait for it
        }
    }

    func kill() async {
        _ = try? await command(["kill-server"])
    }
}

struct TmuxError: Error, CustomStringConvertible {
    var description: String
}

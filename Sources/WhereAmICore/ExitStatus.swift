import Glibc

/// whereami's exit statuses and what each means: the one list that `--help` shows at the end of its discussion
/// and that Scripts/generate-docs turns into the man page's EXIT STATUS section.
enum ExitStatus {
    /// Every status whereami ends with, in order, and its meaning.
    static let all: [(status: String, meaning: String)] = [
        ("0", "a fix (with --sky, the satellites) was printed; or a stream or a watch ended normally, by SIGINT, "
            + "SIGTERM or SIGHUP, or because its terminal hung up"),
        ("1", "anything else went wrong (the system had no thread or descriptor to spare, say)"),
        ("64", "bad usage, or --watch without a terminal on standard output"),
        ("66", "the recording cannot be read or holds no gpsd reports"),
        ("69", "gpsd cannot be reached (one fix, --sky), or the server is not gpsd"),
        ("74", "standard output could not be written, or took nothing for 0.4 s after a signal"),
        ("75", "no fix (with --sky, no satellites) before --timeout"),
        ("76", "gpsd answered with an error (it refused the device, say)"),
        ("128+n", "killed by signal n (as a shell shows it): one fix and --sky by SIGINT, SIGTERM or SIGHUP at "
            + "once, a stream or a watch still running 0.8 s after one"),
    ]

    /// The heading of the list in `--help`, which Scripts/generate-docs looks for.
    static let heading = "Exit status:"

    /// The list as `--help` shows it at `width` columns: a line per status, its number in a column of its own
    /// and its meaning beside it, wrapped under the meaning's first word, so that argument-parser (which wraps
    /// whatever reaches the last column, without an indent) leaves every line as it is.
    static func helpText(width: Int) -> String {
        let numberWidth = all.map(\.status.count).max() ?? 1
        let indent = 2 + numberWidth + 2
        // argument-parser breaks a line that reaches its last column: one column fewer. No fewer than 20 for the
        // meaning, however narrow the terminal (then argument-parser wraps what is left, as it does the rest).
        let columns = max(width - 1 - indent, 20)
        var lines = [heading]
        for (status, meaning) in all {
            let label = "  " + status + String(repeating: " ", count: indent - 2 - status.count)
            for (index, line) in wrap(meaning, to: columns).enumerated() {
                lines.append((index == 0 ? label : String(repeating: " ", count: indent)) + line)
            }
        }
        return lines.joined(separator: "\n")
    }

    /// `text` in lines of at most `columns` characters, broken at spaces (a word longer than that on a line of its
    /// own).
    static func wrap(_ text: String, to columns: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty, line.count + 1 + word.count > columns {
                lines.append(line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }

    /// The width argument-parser wraps `--help` to: `COLUMNS` if set to a number, else the terminal's on standard
    /// output, else 80.
    static var helpWidth: Int {
        if let text = getenv("COLUMNS"), let columns = Int(String(cString: text)) { return columns }
        var size = winsize()
        if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        return 80
    }
}

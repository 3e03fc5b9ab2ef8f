import CProcessEnd
import Glibc
import ProcessEnd

/// The terminal states `whereami --watch` changes, and the text that redraws a frame: raw input through termios,
/// the alternate screen, the cursor hidden; each change undone by ``restore()`` in reverse order.
///
/// Only what was changed is restored, so a terminal that refused one change (or standard input that is not a
/// terminal, which then keeps its modes) is left as it was.
///
/// Each change is announced first to the crash handlers (`process_end_terminal_changed`, Sources/CProcessEnd),
/// so that a crash or an end that cannot wait puts the terminal back too.
struct TerminalModes {
    /// Standard input's modes before raw mode, if it is a terminal and they were changed.
    private var savedInput: termios?
    /// Whether the alternate screen is on (and the cursor hidden).
    private var onAlternateScreen = false

    /// Whether ``enter()`` has set the terminal up, and ``restore()`` not yet undone it.
    var isSetUp: Bool { onAlternateScreen || savedInput != nil }

    /// Switches to the alternate screen with the cursor hidden and, if standard input is a terminal, to raw input:
    /// no echo, keys read one at a time, Ctrl-C and Ctrl-Z as keys rather than signals (the screen's thread
    /// restores the terminal before it acts on them), no flow control.
    mutating func enter() throws(Output.Failure) {
        if isatty(STDIN_FILENO) == 1 {
            var modes = termios()
            guard tcgetattr(STDIN_FILENO, &modes) == 0 else { throw Output.Failure(number: errno) }
            Self.announce(saved: modes)
            var raw = Self.raw(modes)
            guard tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0 else {
                process_end_terminal_restored()
                throw Output.Failure(number: errno)
            }
            savedInput = modes
        } else {
            Self.announce(saved: nil)
        }
        onAlternateScreen = true
        try Output().write(Self.enterScreen)
    }

    /// Tells the crash handlers what to put back: `saved` modes, the alternate screen.
    private static func announce(saved: termios?) {
        let output = BoundedOutput.standardOutput.nonBlockingDescriptor
        if var saved {
            process_end_terminal_changed(&saved, true, output)
        } else {
            process_end_terminal_changed(nil, true, output)
        }
    }

    /// Sets up again what ``enter()`` set up, keeping the modes saved before it: after a stop and continue (a
    /// SIGSTOP, say), during which the shell may have put its own modes back and written on the screen.
    mutating func enterAgain() throws(Output.Failure) {
        Self.announce(saved: savedInput)
        if let modes = savedInput {
            var raw = Self.raw(modes)
            guard tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0 else { throw Output.Failure(number: errno) }
        }
        if onAlternateScreen { try Output().write(Self.enterScreen) }
    }

    private static func raw(_ modes: termios) -> termios {
        var raw = modes
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO | ISIG | IEXTEN)
        raw.c_iflag &= ~tcflag_t(IXON | ICRNL)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        return raw
    }

    /// Undoes what ``enter()`` did: the cursor shown, the normal screen back, standard input's modes as before.
    /// A failure to write is returned (it has nowhere to be said), and the rest is undone all the same.
    ///
    /// The modes change at once (TCSANOW), not after the output has drained (TCSADRAIN), which a stalled
    /// terminal would never do: only input modes were changed, and they do not touch the output still queued.
    @discardableResult
    mutating func restore() -> Output.Failure? {
        var failure: Output.Failure?
        if onAlternateScreen {
            do throws(Output.Failure) { try Output().write(Self.leaveScreen) } catch { failure = error }
            onAlternateScreen = false
        }
        if var modes = savedInput {
            _ = tcsetattr(STDIN_FILENO, TCSANOW, &modes)
            savedInput = nil
        }
        process_end_terminal_restored()
        return failure
    }

    /// The alternate screen (xterm's 1049: the normal screen is saved and comes back as it was), cleared, the
    /// cursor hidden.
    static let enterScreen = "\u{1B}[?1049h\u{1B}[?25l\u{1B}[H\u{1B}[2J"
    /// The cursor shown, the normal screen back.
    static let leaveScreen = "\u{1B}[?25h\u{1B}[?1049l"

    /// Standard output's size in columns and rows (ioctl TIOCGWINSZ), or 80 × 24 where the terminal does not say.
    static func size() -> (columns: Int, rows: Int) {
        var size = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 0 else {
            return (80, 24)
        }
        return (Int(size.ws_col), Int(size.ws_row))
    }

    /// The text that turns a screen showing `previous` into one showing `lines`: each row that changed rewritten
    /// in place (the cursor moved to it, the line written, the rest of the row erased), rows no longer used
    /// erased. With no `previous` (the first frame, or after a resize) the whole screen is cleared and written.
    /// A line as wide as the screen (`columns`) is not followed by an erase: the cursor waits on its last
    /// character then, and the erase would take that character.
    static func redraw(from previous: [String]?, to lines: [String], columns: Int) -> String {
        var text = previous == nil ? "\u{1B}[H\u{1B}[2J" : ""
        let old = previous ?? []
        for row in 0..<max(old.count, lines.count) {
            let line = row < lines.count ? lines[row] : ""
            guard previous == nil || row >= old.count || old[row] != line else { continue }
            if previous == nil, line.isEmpty { continue }
            text += "\u{1B}[\(row + 1);1H" + line + (line.count < columns ? "\u{1B}[K" : "")
        }
        return text
    }
}

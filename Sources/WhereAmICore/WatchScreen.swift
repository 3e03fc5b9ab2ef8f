import Glibc
import GPSDSystem
import ProcessEnd

/// The terminal of `whereami --watch`: a thread of its own owns it from the switch to the alternate screen and raw
/// input to their undoing, draws the panel, reads the keys, and redraws once a second for the fix's age.
///
/// The thread waits in poll(2) on standard input and a wake pipe, never on Swift's cooperative pool: writes to a
/// terminal block while it is stopped (Ctrl-S, a paused tmux pane). Tasks change the panel with ``update(_:)``,
/// which changes it under the lock and wakes the thread; the thread takes a copy under the lock and lays it out
/// and writes it after. ``close()`` returns once the thread has restored the terminal. Its writes wait for a
/// stalled terminal until a signal requests the end, and for ``EndRequest/outputGrace`` at most after that.
final class WatchScreen: Sendable {
    /// What the screen tells its owner.
    enum Event: Sendable {
        /// `q`, `Q` or Ctrl-C was pressed.
        case quit
        /// The terminal could not be set up or written to: the thread has restored what it could, and ended.
        case failed(Output.Failure)
    }

    private struct State {
        var panel: WatchPanel
        /// The size is to be read again and the whole screen redrawn.
        var resized = true
        /// The terminal is to be set up again: the process was stopped and continued.
        var continued = false
        var closing = false
        var finished = false
        /// What stopped the thread's writing, if anything did.
        var failure: Output.Failure?
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state: Locked<State>
    private let wakePipe: WakePipe
    private let tell: @Sendable (Event) -> Void

    /// How long the thread waits for a key or a change before it redraws the fix's age: a second.
    static let tick: Duration = .seconds(1)

    /// A screen for `panel`, telling `tell` of keys and failures; nothing is drawn until ``start()``.
    init(panel: WatchPanel, tell: @escaping @Sendable (Event) -> Void) throws(Output.Failure) {
        do {
            wakePipe = try WakePipe()
        } catch {
            throw Output.Failure(number: error.number)
        }
        state = Locked(State(panel: panel))
        self.tell = tell
    }

    /// Starts the screen's thread, which sets the terminal up and draws the first frame.
    func start() throws(Output.Failure) {
        do {
            try SystemThread(name: "whereami-watch") { [self] in run() }.detach()
        } catch {
            throw Output.Failure(number: error.number)
        }
    }

    /// Changes the panel; the thread redraws what changed.
    func update(_ change: (inout WatchPanel) -> Void) {
        state.withLock { change(&$0.panel) }
        wake()
    }

    /// The terminal's size may have changed (SIGWINCH): the thread reads it again and redraws the whole screen.
    func resized() {
        state.withLock { $0.resized = true }
        wake()
    }

    /// The process was continued (SIGCONT), maybe after a stop that was not Ctrl-Z's (SIGSTOP, or the terminal's
    /// own Ctrl-Z when standard input is not a terminal): the shell may have put its own modes back and written
    /// on the screen meanwhile, so the thread sets the terminal up again and redraws the whole screen.
    func continued() {
        state.withLock { $0.continued = true }
        wake()
    }

    /// Ends the thread; returns once it has put the terminal back as it was, or tried to: the failure that
    /// stopped a write (a terminal that took nothing for the grace after a signal, say), if one did.
    func close() async -> Output.Failure? {
        await withCheckedContinuation { continuation in
            let done = state.withLock { state in
                state.closing = true
                if state.finished { return true }
                state.waiters.append(continuation)
                return false
            }
            if done { continuation.resume() } else { wake() }
        }
        return state.withLock { $0.failure }
    }

    private func wake() {
        wakePipe.signal()
    }

    // MARK: - The thread

    private func run() {
        // Blocked (as in the Dispatch thread this one was made from, but not left to that): a background process's
        // tcsetattr and read then fail or pass instead of stopping it, where it could not act on a SIGTERM.
        var terminalStops = sigset_t()
        sigemptyset(&terminalStops)
        sigaddset(&terminalStops, SIGTTOU)
        sigaddset(&terminalStops, SIGTTIN)
        pthread_sigmask(SIG_BLOCK, &terminalStops, nil)
        var modes = TerminalModes()
        do throws(Output.Failure) {
            try loop(&modes)
        } catch {
            modes.restore()
            finish(error)
            tell(.failed(error))
            return
        }
        finish(modes.restore())
    }

    private func finish(_ failure: Output.Failure?) {
        let waiters = state.withLock { state in
            state.finished = true
            state.failure = failure
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Whether this process is in the foreground of the terminals it reads keys from and draws on (standard input
    /// and output); `true` of one where it cannot tell (not a terminal, not its controlling terminal, or a
    /// terminal gone: reading and writing then fail).
    ///
    /// In the background (started with `&`, or continued with `bg` after Ctrl-Z) the screen leaves the terminal
    /// alone: it neither draws nor sets modes under the shell, and it does not stop itself either, as a
    /// background terminal program usually would (SIGTTOU), since a stopped process could not act on the SIGTERM
    /// that `kill %1` sends with SIGCONT. `fg` brings the panel back within a tick.
    private static var inForeground: Bool {
        [STDIN_FILENO, STDOUT_FILENO].allSatisfy { fd in
            let group = tcgetpgrp(fd)
            return group == -1 || group == getpgrp()
        }
    }

    /// Draws the panel in the foreground, setting the terminal up first when it is not, and waits (a tick at
    /// most) for a change, a key or the next redraw, until the screen closes.
    private func loop(_ modes: inout TerminalModes) throws(Output.Failure) {
        var shown: [String]?
        var size = TerminalModes.size()
        var readsKeys = isatty(STDIN_FILENO) == 1
        while true {
            let decided = state.withLock { state -> (panel: WatchPanel, resized: Bool, continued: Bool)? in
                guard !state.closing else { return nil }
                defer { (state.resized, state.continued) = (false, false) }
                return (state.panel, state.resized, state.continued)
            }
            guard case (var panel, let resized, let continued)? = decided else { return }
            let foreground = Self.inForeground
            if !foreground {
                // Set up only if an outside SIGSTOP and bg put it here: the terminal goes back to the shell.
                modes.restore()
            } else {
                if !modes.isSetUp {
                    try modes.enter()
                    shown = nil
                } else if continued {
                    try modes.enterAgain()
                    shown = nil
                }
                if resized || shown == nil {
                    size = TerminalModes.size()
                    shown = nil
                }
                panel.now = .now
                let lines = panel.lines(columns: size.columns, rows: size.rows)
                try Output().write(TerminalModes.redraw(from: shown, to: lines, columns: size.columns))
                shown = lines
            }

            let keys = readsKeys && foreground
            // A failed poll (it cannot fail but for a bad descriptor) goes round again, a tick later at most.
            let input = (try? wakePipe.poll(keys ? STDIN_FILENO : nil, events: Int16(POLLIN), timeout: Self.tick)) ?? 0
            if keys, input != 0 {
                switch readKeys() {
                case .quit: tell(.quit)
                case .redraw: state.withLock { $0.resized = true }
                case .suspend: suspend(&modes)   // the next round sets the terminal up again, in the foreground
                case .endOfInput: readsKeys = false
                case nil: break
                }
            }
        }
    }

    /// Ctrl-Z: the terminal put back as it was, then the job stopped as the terminal's own Ctrl-Z would stop it
    /// (SIGTSTP to the terminal's foreground process group, whereami's). Once continued, the loop sets the
    /// terminal up again and redraws the whole screen if it is in the foreground (`fg`), and leaves the terminal
    /// alone while it is not (`bg`, or the SIGCONT of `kill %1`; see ``inForeground``). Outside the terminal's
    /// foreground group, or with SIGTSTP ignored from the start (no job control to continue it), the key is
    /// ignored.
    private func suspend(_ modes: inout TerminalModes) {
        guard tcgetpgrp(STDIN_FILENO) == getpgrp() else { return }
        // Ignored meanwhile: sent to the group, the signal would be taken by whichever thread does not block it,
        // maybe only after this one has gone on (and set the terminal up again), or after SIGCONT, stopping the
        // process twice.
        var ignore = sigaction(), disposition = sigaction()
        ignore.__sigaction_handler.sa_handler = SIG_IGN
        sigaction(SIGTSTP, &ignore, &disposition)
        // Started with the signal ignored (by a shell without job control): nothing would continue the job.
        guard !Self.isIgnored(disposition) else { return }
        modes.restore()
        kill(0, SIGTSTP)   // the rest of the job (a script that runs whereami, say), as the terminal would
        sigaction(SIGTSTP, &ignore, nil)   // made ignored again: one left pending by a thread that blocks it goes
        sigaction(SIGTSTP, &disposition, nil)
        // This thread blocks the signal (its mask is that of Dispatch's thread it was made from): unblocked, the
        // signal raised to it stops the process before raise returns; SIGCONT goes on from there.
        var stop = sigset_t(), mask = sigset_t()
        sigemptyset(&stop)
        sigaddset(&stop, SIGTSTP)
        pthread_sigmask(SIG_UNBLOCK, &stop, &mask)
        raise(SIGTSTP)
        pthread_sigmask(SIG_SETMASK, &mask, nil)
    }

    private static func isIgnored(_ action: sigaction) -> Bool {
        unsafeBitCast(action.__sigaction_handler.sa_handler, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self)
    }

    private enum Keys { case quit, redraw, suspend, endOfInput }

    /// What the keys waiting on standard input ask for: `q`, `Q` or Ctrl-C to quit, Ctrl-L to redraw the screen,
    /// Ctrl-Z to suspend; others are ignored.
    private func readKeys() -> Keys? {
        var bytes = [UInt8](repeating: 0, count: 64)
        let count = read(STDIN_FILENO, &bytes, bytes.count)
        // EIO in the background (put there between poll and read): not the end of input.
        if count < 0, errno == EIO, !Self.inForeground { return nil }
        if count == 0 || (count < 0 && errno != EINTR && errno != EAGAIN) { return .endOfInput }
        let keys = bytes.prefix(max(count, 0))
        if keys.contains(where: { $0 == UInt8(ascii: "q") || $0 == UInt8(ascii: "Q") || $0 == 0x03 }) { return .quit }
        if keys.contains(0x1A) { return .suspend }
        return keys.contains(0x0C) ? .redraw : nil
    }
}

import CProcessEnd
import Foundation
import ProcessEnd
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The end request, the bounded output and the crash handlers, each in a child process of its own (an exit
/// test): each catches signals, replaces its standard output or ends by a signal, which the test process must not.
@Suite("How whereami and the samples end: the end request, bounded output, crash handlers")
struct ProcessEndTests {
    /// Standard output made a pipe of one page that nobody reads; returns its read end.
    static func unreadStandardOutput() -> Int32 {
        var ends: [Int32] = [-1, -1]
        precondition(pipe(&ends) == 0)
        _ = fcntl(ends[1], 1031 /* F_SETPIPE_SZ */, 4096)
        precondition(dup2(ends[1], STDOUT_FILENO) == STDOUT_FILENO)
        close(ends[1])
        return ends[0]
    }

    @Test("after SIGTERM a write into a full pipe waits the grace, then gives up between lines")
    func abandonsBetweenLines() async {
        await #expect(processExitsWith: .success) {
            let reader = ProcessEndTests.unreadStandardOutput()
            let request = try EndRequest.catching(program: "test")
            kill(getpid(), SIGTERM)
            var signals = request.signals.makeAsyncIterator()
            #expect(await signals.next() == SIGTERM)
            #expect(request.signal == SIGTERM)
            // 300 lines of 60 bytes: 18,000 bytes, of which the pipe takes 4096 at most.
            let lines = (0..<300).map { "line \(String($0).padding(toLength: 4, withPad: " ", startingAt: 0)) "
                + String(repeating: "x", count: 49) + "\n" }
            let text = lines.joined()
            let started = ContinuousClock.now
            #expect {
                try BoundedOutput.standardOutput.write(text)
            } throws: { error in
                (error as? BoundedOutput.Failure)?.abandoned == true
            }
            let waited = ContinuousClock.now - started
            #expect(waited < EndRequest.limit, "it gave up after \(waited), within the grace rather than the limit")
            // The grace has passed: a later write (more than the 16 bytes left) tries once, and gives up at once.
            #expect(throws: BoundedOutput.Failure.self) { try BoundedOutput.standardOutput.write(String(repeating: "y", count: 99) + "\n") }
            var bytes = [UInt8](repeating: 0, count: 65_536)
            _ = fcntl(reader, F_SETFL, O_NONBLOCK)
            let count = read(reader, &bytes, bytes.count)
            let written = String(decoding: bytes.prefix(max(count, 0)), as: UTF8.self)
            #expect(count > 0 && written.hasSuffix("\n") && text.hasPrefix(written), "whole lines: \(written.suffix(100))")
        }
    }

    @Test("a program that does not end within the limit after SIGTERM is ended by it, saying so")
    func endsByTheSignalAtTheLimit() async throws {
        let result = try await #require(processExitsWith: .signal(SIGTERM), observing: [\.standardErrorContent]) {
            _ = try EndRequest.catching(program: "stuck")
            kill(getpid(), SIGTERM)
            // Something that never ends: only the request's thread can end the process now.
            while true { sleep(10) }
        }
        let said = String(decoding: result.standardErrorContent, as: UTF8.self)
        #expect(said.contains("stuck: not ended 0.8 s after SIGTERM; ending by it"), "\(said)")
    }

    @Test("a later signal (a hangup brings two SIGHUPs) does not cut the end short")
    func secondSignal() async {
        await #expect(processExitsWith: .success) {
            let request = try EndRequest.catching(program: "twice")
            // Two different signals: two of the same, both pending at once, would be delivered as one.
            kill(getpid(), SIGHUP)
            kill(getpid(), SIGTERM)
            // Each is handled on whichever thread takes it: either may come first.
            var signals = request.signals.makeAsyncIterator()
            let first = await signals.next()
            #expect(first == SIGHUP || first == SIGTERM)
            // The request's thread reads the second byte with the first, or just after: a tenth of a second for it
            // to act, were it to end the process, well within the limit. Then the program ends its own way.
            try await Task.sleep(for: .milliseconds(100))
            #expect(request.signal == first)
        }
    }

    /// The text the handlers write to put a terminal back: CAN (ending an escape sequence cut short), the
    /// cursor shown, the normal screen back.
    static let restoring = "\u{18}\u{1B}[?25h\u{1B}[?1049l"

    /// In a child: announces a terminal on the alternate screen whose restoring text goes to the file of `tag`.
    static func changeTheTerminal(_ tag: String) {
        let fd = open(restoreFile(parent: getppid(), tag), O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        process_end_terminal_changed(nil, true, fd)
    }

    /// A file for a child to write the terminal's restoring text to, named after the test process (the child's
    /// parent), so that both find it, and the test (`tag`), since exit tests run side by side.
    static func restoreFile(parent: pid_t, _ tag: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("process-end-\(parent)-\(tag).out").path
    }

    @Test("a trap (a fault: its instruction runs again into the previous handler) puts the terminal back first")
    func trapRestoresTheTerminal() async throws {
        let path = Self.restoreFile(parent: getpid(), "trap")
        defer { try? FileManager.default.removeItem(atPath: path) }
        await #expect(processExitsWith: .failure) {
            ProcessEndTests.changeTheTerminal("trap")
            try CrashSignals.restoreTheTerminal()
            fatalError("a trap, as a failed precondition is")
        }
        let written = try String(contentsOfFile: path, encoding: .utf8)
        #expect(written == Self.restoring, "\(written.debugDescription)")
    }

    /// Unblocks SIGABRT on the calling thread. glibc 2.41 and later's abort(3), on a thread that blocks SIGABRT (as
    /// Dispatch's threads, this body's, do), sets the default action before the signal is delivered, so no
    /// handler runs: Documentation/Architecture.md lists it among what is not covered.
    static func unblockAbort() {
        var abort = sigset_t()
        sigemptyset(&abort)
        sigaddset(&abort, SIGABRT)
        pthread_sigmask(SIG_UNBLOCK, &abort, nil)
    }

    @Test("SIGABRT (abort(3): given to the previous handler, then the default action) puts the terminal back once")
    func abortRestoresTheTerminal() async throws {
        let path = Self.restoreFile(parent: getpid(), "abort")
        defer { try? FileManager.default.removeItem(atPath: path) }
        await #expect(processExitsWith: .signal(SIGABRT)) {
            ProcessEndTests.changeTheTerminal("abort")
            try CrashSignals.restoreTheTerminal()
            ProcessEndTests.unblockAbort()
            abort()
        }
        let written = try String(contentsOfFile: path, encoding: .utf8)
        #expect(written == Self.restoring, "\(written.debugDescription)")
    }

    @Test("a terminal put back by the program itself is left alone by a crash")
    func restoredTerminalIsLeftAlone() async throws {
        let path = Self.restoreFile(parent: getpid(), "restored")
        defer { try? FileManager.default.removeItem(atPath: path) }
        await #expect(processExitsWith: .signal(SIGABRT)) {
            ProcessEndTests.changeTheTerminal("restored")
            process_end_terminal_restored()
            try CrashSignals.restoreTheTerminal()
            ProcessEndTests.unblockAbort()
            abort()
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "")
    }

    @Test("a signal ignored from the start (nohup's SIGHUP) stays ignored; SIGTERM still requests the end")
    func ignoredStaysIgnored() async {
        await #expect(processExitsWith: .success) {
            signal(SIGHUP, SIG_IGN)
            let request = try EndRequest.catching(program: "nohup")
            kill(getpid(), SIGHUP)
            kill(getpid(), SIGTERM)
            var signals = request.signals.makeAsyncIterator()
            #expect(await signals.next() == SIGTERM)
            #expect(request.signal == SIGTERM)
        }
    }

    @Test("a timer's SIGALRM (sent by the kernel, not a fault) puts the terminal back and ends the process by it")
    func alarmEndsTheProcess() async throws {
        let path = Self.restoreFile(parent: getpid(), "alarm")
        defer { try? FileManager.default.removeItem(atPath: path) }
        await #expect(processExitsWith: .signal(SIGALRM)) {
            ProcessEndTests.changeTheTerminal("alarm")
            try CrashSignals.restoreTheTerminal()
            alarm(1)
            while true { sleep(10) }
        }
        let written = try String(contentsOfFile: path, encoding: .utf8)
        #expect(written == Self.restoring, "\(written.debugDescription)")
    }

    @Test("a previous handler that returns (as Swift's backtracer does from a signal it did not cause) still ends the process by the signal")
    func previousHandlerThatReturns() async {
        await #expect(processExitsWith: .signal(SIGQUIT)) {
            var returning = sigaction()
            returning.__sigaction_handler.sa_handler = { _ in }
            sigaction(SIGQUIT, &returning, nil)
            try CrashSignals.restoreTheTerminal()
            // Raised on this thread, unblocked: delivered before raise returns, so only a handler that let the
            // process go on gets past it. (Sent to the process, it could go to another thread, later.)
            var quit = sigset_t()
            sigemptyset(&quit)
            sigaddset(&quit, SIGQUIT)
            pthread_sigmask(SIG_UNBLOCK, &quit, nil)
            raise(SIGQUIT)
        }
    }
}

import CProcessEnd
import Glibc
import GPSDSystem

/// SIGINT, SIGTERM and SIGHUP as a request to end, answered within a bound whatever the program's output is doing.
///
/// whereami and the samples catch the signals with ``catching(_:program:)``. A signal's handler only writes its
/// number to a pipe (in C, async-signal-safe); a thread of the request's own reads it, off Swift's cooperative
/// pool, so that a pool blocked by a write cannot hold the request back. It then:
/// - makes ``descriptor`` readable, for good: every ``BoundedOutput`` write waiting for room wakes and waits
///   ``outputGrace`` more at most, then gives up;
/// - passes the signal on to ``signals``, where the program ends its work (closes a document, puts the terminal
///   back) and exits;
/// - if the program has not exited ``limit`` after the signal (something else blocked), puts the terminal back if
///   it is changed and ends the process by the signal's default action, after a line on standard error (if it
///   takes it at once). The exit status then says the signal ended it.
///
/// Later signals change nothing: a hangup often brings two SIGHUPs, and the end is bounded anyway.
package final class EndRequest: Sendable {
    /// How long a write waits for room after the request: 0.4 s. A reader that is only slow gets the end of its
    /// document; one that has stopped reading does not hold the end back.
    package static let outputGrace: Duration = .milliseconds(400)
    /// How long after the request the program may take to exit before it is ended by the signal: 0.8 s.
    package static let limit: Duration = .milliseconds(800)

    private struct State {
        var signal: Int32?
        var requested: ContinuousClock.Instant?
    }

    /// The signals, as the request's thread reads them; the first one is the request.
    package let signals: AsyncStream<Int32>
    private let sink: AsyncStream<Int32>.Continuation
    private let state = Locked(State())
    private let program: String
    /// The pipe the handlers write to, and the one that becomes readable at the request.
    private let caught: (readEnd: Int32, writeEnd: Int32)
    private let announced: (readEnd: Int32, writeEnd: Int32)

    /// The request of this process, once a program has made one.
    private static let current = Locked<EndRequest?>(nil)

    /// The request made by ``catching(_:program:)``, if any: what ``BoundedOutput`` waits for.
    package static var active: EndRequest? { current.withLock { $0 } }

    /// Catches `signals` from now on, for `program` (its name, for the line on standard error); once per process.
    package static func catching(
        _ signals: [Int32] = [SIGINT, SIGTERM, SIGHUP], program: String
    ) throws(BoundedOutput.Failure) -> EndRequest {
        let request = try EndRequest(program: program)
        let first = current.withLock { current -> Bool in
            guard current == nil else { return false }
            current = request
            return true
        }
        precondition(first, "an EndRequest is made once per process")
        do {
            try SystemThread(name: "process-end") { request.run() }.detach()
        } catch {
            throw .init(number: error.number)
        }
        for signal in signals {
            guard process_end_catch(signal, request.caught.writeEnd) == 0 else { throw .init(number: errno) }
        }
        return request
    }

    private init(program: String) throws(BoundedOutput.Failure) {
        self.program = program
        do {
            caught = try Syscall.pipe()
            announced = try Syscall.pipe()
        } catch {
            throw .init(number: error.number)
        }
        (signals, sink) = AsyncStream.makeStream(of: Int32.self)
    }

    /// The signal that requested the end, once one has.
    package var signal: Int32? { state.withLock { $0.signal } }

    /// A descriptor that becomes readable at the request and stays so: poll(2) it beside what a write waits for.
    package var descriptor: Int32 { announced.readEnd }

    /// Until when output may wait for room: ``outputGrace`` after the request; nil before it.
    package var outputDeadline: ContinuousClock.Instant? {
        state.withLock { $0.requested.map { $0 + Self.outputGrace } }
    }

    /// The signal's name as a shell says it: `SIGTERM`.
    package static func name(of signal: Int32) -> String {
        switch signal {
        case SIGINT: "SIGINT"
        case SIGTERM: "SIGTERM"
        case SIGHUP: "SIGHUP"
        default: "signal \(signal)"
        }
    }

    // MARK: - The request's thread

    /// The thread that reads the signals (detached: it lives as long as the process).
    private func run() {
        var deadline: ContinuousClock.Instant?
        while true {
            var fds = [pollfd(fd: caught.readEnd, events: Int16(POLLIN), revents: 0)]
            let wait = Syscall.pollTimeout(until: deadline)
            if wait == 0 { endNow() }
            guard poll(&fds, 1, wait) > 0 else { continue }
            var bytes = [UInt8](repeating: 0, count: 16)
            let count = read(caught.readEnd, &bytes, bytes.count)
            guard count > 0 else { continue }
            for byte in bytes.prefix(count) {
                let signal = Int32(byte)
                let first = state.withLock { state -> Bool in
                    guard state.signal == nil else { return false }
                    (state.signal, state.requested) = (signal, .now)
                    return true
                }
                // A later signal changes nothing: a hangup often brings two SIGHUPs (the kernel's to the
                // terminal's foreground group, the shell's to its jobs), and the end is bounded anyway.
                guard first else { continue }
                deadline = .now + Self.limit
                var byte: UInt8 = 1
                _ = write(announced.writeEnd, &byte, 1)
                sink.yield(signal)
            }
        }
    }

    /// Ends the process by the request's signal: it did not end in time. The terminal first, then the line on
    /// standard error, which may be that terminal.
    private func endNow() -> Never {
        let signal = self.signal ?? SIGTERM
        process_end_restore_terminal()
        let line = "\(program): not ended \(Self.limit.secondsText) after \(Self.name(of: signal)); ending by it\n"
        try? BoundedOutput.standardError.write(line)
        process_end_by_signal(signal)
    }

}

/// The signals that end a process abnormally but can be caught, each made to put the terminal back first.
package enum CrashSignals {
    /// Installs the handlers (once; `process_end_catch_crashes`, Sources/CProcessEnd): for SIGSEGV, SIGBUS,
    /// SIGILL, SIGTRAP, SIGABRT, SIGFPE, SIGQUIT and SIGSYS (and the other signals whose default action ends a
    /// process, while it is theirs), each puts the terminal back if a program changed it
    /// (`process_end_terminal_changed`), then gives the signal to the handler that was there before (Swift's
    /// backtracer, or the default action), so the report stays as it was, and the process ends by the signal
    /// (`process_end_catch_crashes`). An exit(3) while the terminal is changed puts it back too.
    package static func restoreTheTerminal() throws(BoundedOutput.Failure) {
        guard process_end_catch_crashes() == 0 else { throw .init(number: errno) }
    }
}

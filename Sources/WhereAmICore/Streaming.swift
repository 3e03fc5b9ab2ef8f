import FoundationEssentials
import GPSDLocation
import ProcessEnd

extension WhereAmI {
    /// What happens while a stream runs; the loop in ``stream(from:to:status:)`` decides what each means.
    private enum StreamEvent: Sendable {
        /// The first fix is being written.
        case firstFix
        /// The printer takes no more fixes: --count is reached, or a write failed.
        case stopped
        /// The manager ended the stream: a fatal failure (the error), or the end of a recording.
        case ended(LocationError?)
        /// The first fix's deadline passed.
        case deadline
        /// SIGINT, SIGTERM or SIGHUP.
        case signal
    }

    /// --follow: the document's header at once, a record per fix, the footer at the end, however it ends.
    ///
    /// Each record is written by the thread that reads gpsd, as its fix is decided (``StreamPrinter``, fed by the
    /// manager's real-time handler): no task stands between a fix and its line. The printer, the manager's end,
    /// the first fix's deadline and the signals report to one loop, which decides when the stream ends; then the
    /// subscription is cancelled (the epoch it holds is printed first, unless the printer has stopped) and the
    /// footer closes the document.
    ///
    /// A signal ends it within a second whatever standard output does (``EndRequest``): a reader that has stopped
    /// reading gets what it takes within ``EndRequest/outputGrace``, whole lines, and the run ends with status 74
    /// if the rest (the document's end) could not be written.
    func stream(from gps: AsyncLocationManager, to output: Output, status: StatusReporter) async throws {
        // Caught before the header goes out (and no longer ending the program): a stream closes its document.
        let end = try EndRequest.catching(program: "whereami")
        let writer = self.output.format.makeWriter(streaming: true)
        try output.write(writer.header)
        let timeout = request.firstFixTimeout
        status.say("waiting for fixes" + (timeout.isUnlimited ? "" : " (first within \(timeout) s)"))

        let (events, sink) = AsyncStream.makeStream(of: StreamEvent.self)
        // Each record carries the fix's age as it is written, and the heading of its time if gpsd reported one.
        let manager = gps.manager, window = manager.staleTimeout
        let printer = StreamPrinter(
            writer: writer, output: output, count: request.count, interval: request.interval,
            canWait: connection.isReplay,
            context: { RecordContext(fix: $0, heading: manager.heading, window: window) }
        ) { event in
            sink.yield(event == .firstFix ? .firstFix : .stopped)
        }
        // One record per epoch, its most complete: gpsd 3.25 and later send an epoch's fix once per sentence (RMC,
        // then GGA with the altitude), and a track or a log wants each epoch once.
        let subscription = gps.manager.realTimeUpdates(
            desiredAccuracy: request.accuracy, distanceFilter: request.distance, delivery: .oncePerEpoch,
            onEnd: { sink.yield(.ended($0)) }, printer.print)

        var (failure, expired) = (LocationError?.none, false)
        await withTaskGroup(of: Void.self) { group in
            if !timeout.isUnlimited {
                group.addTask {
                    guard (try? await Task.sleep(for: timeout.duration)) != nil else { return }
                    sink.yield(.deadline)
                }
            }
            group.addTask {
                for await _ in end.signals {
                    sink.yield(.signal)
                    return
                }
            }
            var sawFix = false
            loop: for await event in events {
                switch event {
                case .firstFix: sawFix = true
                case .deadline where !sawFix:
                    expired = true
                    break loop
                case .deadline: break
                // Ends the stream after the epoch it holds: cancelling hands it to the printer, before the footer.
                case .signal, .stopped: break loop
                case .ended(let error):
                    failure = error
                    break loop
                }
            }
            group.cancelAll()
            sink.finish()
        }
        // A stream that ran out of time prints nothing more; one that ends otherwise prints the epoch it holds.
        if expired { _ = await printer.finish() }
        await subscription.cancel()
        let (final, writeFailure) = await printer.finish()

        if let writeFailure { throw writeFailure }   // no footer to a reader that has gone (or stopped reading)
        try output.write(final.footer)
        if let failure { throw failure }
        if expired { throw LocationError(.timedOut, "no fix within \(timeout) s") }
    }
}

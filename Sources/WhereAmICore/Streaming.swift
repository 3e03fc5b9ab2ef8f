import FoundationEssentials
import GPSDLocation
import UnixSignals

extension WhereAmI {
    /// What happens while a stream runs; the loop in ``stream(from:to:status:)`` decides what each means.
    private enum StreamEvent: Sendable {
        /// The first fix was written.
        case firstFix
        /// The writer has stopped: its state (for the footer), and the error that stopped it, if any.
        case written(any LocationWriter, (any Error)?)
        /// The first fix's deadline passed.
        case deadline
        /// SIGINT or SIGTERM.
        case signal
    }

    /// --follow: the document's header at once, a record per fix, the footer at the end, however it ends.
    ///
    /// Three child tasks report to one loop: the writer, the first fix's deadline, and the signals. The loop
    /// ends the others when one of them decides, and the writer always hands back its state for the footer.
    func stream(from gps: AsyncLocationManager, to output: Output, status: StatusReporter) async throws {
        // Caught before the header goes out (and no longer ending the program): a stream always closes its document.
        let signals = await UnixSignalsSequence(trapping: .sigint, .sigterm)
        let writer = self.output.format.makeWriter(streaming: true)
        try output.write(writer.header)
        let timeout = request.firstFixTimeout
        status.say("waiting for fixes" + (timeout.isUnlimited ? "" : " (first within \(timeout) s)"))

        // A live receiver cannot wait for a slow reader, so keep the newest fixes; a recording can, and a
        // replay as fast as possible would otherwise outrun the writer and lose fixes. One record per epoch,
        // its most complete: gpsd 3.25 and later send an epoch's fix once per sentence (RMC, then GGA with
        // the altitude), and a track or a log wants each epoch once.
        let fixes = gps.updates(
            desiredAccuracy: request.accuracy, distanceFilter: request.distance, delivery: .oncePerEpoch,
            bufferingPolicy: connection.isReplay ? .unbounded : AsyncLocationManager.defaultBufferingPolicy)
        let (events, sink) = AsyncStream.makeStream(of: StreamEvent.self)
        let (count, interval) = (request.count, request.interval)

        var (final, failure, expired) = (writer, (any Error)?.none, false)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                var writer = writer
                var printed = 0
                var lastTime: Date?
                do {
                    for try await fix in fixes {
                        // A time before the last one printed (a receiver's clock reset, a log replayed again)
                        // starts the interval over rather than holding everything back until time catches up.
                        if let interval, let last = lastTime,
                           (0..<interval).contains(fix.timestamp.timeIntervalSince(last)) { continue }
                        lastTime = fix.timestamp
                        try output.write(writer.record(fix))
                        printed += 1
                        if printed == 1 { sink.yield(.firstFix) }
                        if let count, printed >= count { break }
                    }
                    sink.yield(.written(writer, nil))
                } catch {
                    sink.yield(.written(writer, error))
                }
            }
            if !timeout.isUnlimited {
                group.addTask {
                    guard (try? await Task.sleep(for: timeout.duration)) != nil else { return }
                    sink.yield(.deadline)
                }
            }
            group.addTask {
                for await _ in signals {
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
                    group.cancelAll()   // the writer then stops and hands back its state
                case .deadline: break
                case .signal:
                    // Ends the stream after the epoch it holds: the writer records it, then writes the footer.
                    await gps.stop()
                case .written(let writer, let error):
                    (final, failure) = (writer, error)
                    break loop
                }
            }
            group.cancelAll()
            sink.finish()
        }

        if let failure = failure as? Output.Failure { throw failure }   // no footer to a reader that has gone
        try output.write(final.footer)
        if let failure { throw failure }
        if expired { throw LocationError(.timedOut, "no fix within \(timeout) s") }
    }
}

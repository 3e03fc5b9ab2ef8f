import FoundationEssentials
import GPSDLocation
import GPSDSystem
import Synchronization

extension WhereAmI {
    /// What reaches the one fix's wait; the loop in ``printOneFix(from:to:status:)`` decides what each means.
    private enum OneFixEvent: Sendable {
        /// A receiver's epoch is over: its most complete record (that meets --accuracy).
        case epoch(Location)
        /// With --max-age: the fix gpsd held, young enough, which no epoch of the stream will bring.
        case held(Location)
        /// The request took a report of a live epoch, which the stream of epochs brings whole.
        case tookLiveReport
        /// The request failed: its timeout (saying what stood in the way), gpsd out of reach, a fatal failure.
        case failed(any Error)
        /// The stream of epochs ended: a fatal failure (the error), or the end of a recording.
        case ended(LocationError?)
        /// --timeout has passed.
        case deadline
    }

    /// The live reports seen while one fix waits: each receiver's epochs (its device, its time).
    private final class LiveReports: Sendable {
        private struct Epoch: Hashable {
            var device: String?
            var time: Date
        }

        private let seen = Locked<Set<Epoch>>([])

        /// A real-time handler: quick, on the manager's reader thread.
        func saw(_ fix: Location) {
            _ = seen.withLock { $0.insert(Epoch(device: fix.device, time: fix.timestamp)) }
        }

        func contains(_ fix: Location) -> Bool {
            seen.withLock { $0.contains(Epoch(device: fix.device, time: fix.timestamp)) }
        }
    }

    /// One fix: the first whole epoch (its most complete record, as `--follow` writes it: gpsd 3.25 and later send
    /// an epoch once per sentence, RMC's 2D fix first, then GGA's altitude), or with `--max-age` the fix gpsd holds
    /// if it is young enough; waits up to --timeout (30 s by default) and says once what for.
    ///
    /// The epochs come from a real-time subscription that takes each once (``EpochDelivery/oncePerEpoch``). Beside
    /// it, a one-shot request: it fails at once when gpsd cannot be reached, carries the timeout's reasons (the
    /// best fix against --accuracy, the held fix --max-age refused), and with --max-age asks gpsd for its held
    /// fix. The request may instead take a live epoch's first report: a subscription that sees every report as it
    /// comes, made before the request, tells the two apart (the manager hands a fix to its subscriptions in the
    /// order they subscribed, on one thread, so the report is seen before the request resumes); a live report
    /// waits for its epoch.
    func printOneFix(from gps: AsyncLocationManager, to output: Output, status: StatusReporter) async throws {
        let timeout = request.firstFixTimeout
        let (maximumAge, accuracy) = (request.maxAge?.duration, request.accuracy)
        status.say(Self.oneFixWait(timeout: timeout, maximumAge: request.maxAge, accuracy: accuracy))
        let (events, sink) = AsyncStream.makeStream(of: OneFixEvent.self)

        let liveReports = LiveReports()
        let reports = maximumAge.map { _ in gps.manager.realTimeUpdates(liveReports.saw) }
        // gpsd's held fix reaches the delegate, never a stream: one of unknown age is said there.
        let heldFixes = maximumAge.map { _ in HeldFixWatch(status: status) }
        if let heldFixes {
            gps.manager.delegate = heldFixes
            gps.manager.startUpdatingLocation()
        }
        let epochs = gps.manager.realTimeUpdates(
            desiredAccuracy: accuracy, delivery: .oncePerEpoch, onEnd: { sink.yield(.ended($0)) }
        ) { sink.yield(.epoch($0)) }

        var result: Result<Location, any Error>?
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                do {
                    let fix = try await gps.requestLocation(
                        timeout: timeout.duration, maximumAge: maximumAge, desiredAccuracy: accuracy)
                    let live = maximumAge == nil || liveReports.contains(fix)
                    sink.yield(live ? .tookLiveReport : .held(fix))
                } catch is CancellationError {
                } catch {
                    sink.yield(.failed(error))
                }
            }
            if !timeout.isUnlimited {
                group.addTask {
                    guard (try? await Task.sleep(for: timeout.duration)) != nil else { return }
                    sink.yield(.deadline)
                }
            }
            var requestDone = false
            loop: for await event in events {
                switch event {
                case .epoch(let fix), .held(let fix):
                    result = .success(fix)
                    break loop
                case .tookLiveReport: requestDone = true
                case .failed(let error):
                    result = .failure(error)
                    break loop
                case .ended(let error?):
                    result = .failure(error)
                    break loop
                // A recording's end: the request ends with it, and says why there was no fix.
                case .ended(nil) where !requestDone: continue
                case .ended(nil):
                    result = .failure(LocationError(.locationUnknown, "no fix before the recording ended"))
                    break loop
                // The request's own timeout says what stood in the way; it comes at the same time.
                case .deadline where !requestDone: continue
                case .deadline:
                    result = .failure(LocationError(.timedOut, "no fix in \(timeout) s"))
                    break loop
                }
            }
            group.cancelAll()
            sink.finish()
        }
        await epochs.cancel()
        await reports?.cancel()
        if heldFixes != nil { gps.manager.stopUpdatingLocation() }

        guard let fix = try result?.get() else { throw LocationError(.locationUnknown, "no fix") }
        var writer = self.output.format.makeWriter(streaming: false)
        let context = RecordContext(fix: fix, heading: gps.manager.heading, window: gps.manager.staleTimeout)
        try output.write(writer.header + writer.record(fix, context) + writer.footer)
    }

    /// The one line a fix's wait says: `waiting for a fix, the receiver's next complete one (up to 30.0 s)`, or
    /// with --max-age `waiting for a fix: gpsd's if at most 5.0 s old, else the receiver's next complete one …`.
    static func oneFixWait(timeout: Seconds, maximumAge: Seconds?, accuracy: Double?) -> String {
        let within = accuracy.map { " within \(Field.number($0)) m" } ?? ""
        let limit = timeout.isUnlimited ? "" : " (up to \(timeout) s)"
        let held = maximumAge.map { ": gpsd's if at most \($0) s old, else" } ?? ","
        return "waiting for a fix\(within)\(held) the receiver's next complete one\(limit)"
    }
}

/// With --max-age: the manager's delegate, which alone sees the fix gpsd holds (asked for with `?POLL;`), and says
/// once when that fix is of unknown age (its time is not one gpsd's clock vouches for: a receiver's clock far off,
/// a computer without a real-time clock), since --max-age cannot take it and the wait goes on for a live fix.
final class HeldFixWatch: LocationManagerDelegate {
    private let status: StatusReporter
    private let told = Atomic<Bool>(false)

    init(status: StatusReporter) { self.status = status }

    func locationManager(_ manager: LocationManager, didUpdateLocations locations: [Location]) {
        // A live fix always has a delay; a held one whose age cannot be told has none.
        guard locations.contains(where: { $0.arrival != nil && $0.arrival?.delay == nil }) else { return }
        guard !told.exchange(true, ordering: .relaxed) else { return }
        status.say("the fix gpsd holds is of unknown age (its time is not one gpsd's clock vouches for), so "
                   + "--max-age cannot take it: waiting for the receiver's next complete fix")
    }

    func locationManager(_ manager: LocationManager, didFailWithError error: any Error) {}
}

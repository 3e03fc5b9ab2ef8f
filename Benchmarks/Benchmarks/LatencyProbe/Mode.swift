import Dispatch
import GPSDLocation

/// One way an application receives fixes through the library's public API: what the latency probe measures.
///
/// A mode starts receiving from a gpsd and stamps each fix in a ``StampRecorder`` where the application would
/// first hold it; the ``Receiving`` value it returns stops it. Adding a mode is a static value below and its name in
/// ``all``.
struct Mode: Sendable {
    /// A consumer that is receiving fixes.
    struct Receiving {
        /// Stops receiving; returns once the consumer has stopped, so that nothing records any more.
        let stop: () -> Void
    }

    /// The name on the command line.
    let name: String
    /// What is stamped, for the usage text.
    let summary: String
    /// Starts receiving from the server, stamping each fix as the consumer gets it.
    let start: @Sendable (GPSDServer, StampRecorder) -> Receiving

    /// Every mode, in the order the usage text lists them.
    static let all: [Mode] = [.delegate, .updates, .live, .realTime]
}

extension Mode {
    /// `LocationManager` and its delegate: stamped as `locationManager(_:didUpdateLocations:)` is called, on the
    /// manager's own delegate queue.
    static let delegate = Mode(
        name: "delegate", summary: "LocationManagerDelegate.locationManager(_:didUpdateLocations:) is called"
    ) { server, stamps in
        let manager = LocationManager(server: server)
        let delegate = StampingDelegate(stamps)
        manager.delegate = delegate
        manager.startUpdatingLocation()
        return Receiving {
            manager.stopUpdatingLocation()
            // Once stopUpdatingLocation() has returned, the delegate is called no more: it may go.
            withExtendedLifetime(delegate) {}
        }
    }

    /// `AsyncLocationManager.updates()`: stamped as the consuming task gets each fix from the sequence.
    static let updates = Mode(
        name: "updates", summary: "a task gets a fix from AsyncLocationManager.updates()"
    ) { server, stamps in
        consuming(server) { gps in
            for try await fix in gps.updates() { stamps.record(fix, at: StampRecorder.now()) }
        }
    }

    /// `AsyncLocationManager.liveUpdates()`: stamped as the consuming task gets an update that brings a new fix.
    static let live = Mode(
        name: "live", summary: "a task gets an update with isNewFix from AsyncLocationManager.liveUpdates()"
    ) { server, stamps in
        consuming(server) { gps in
            for try await update in gps.liveUpdates() {
                let stamp = StampRecorder.now()
                guard update.isNewFix, let fix = update.location else { continue }
                stamps.record(fix, at: stamp)
            }
        }
    }

    /// `LocationManager.realTimeUpdates(_:)`: stamped in the handler, which the manager calls synchronously on the
    /// thread that reads gpsd.
    static let realTime = Mode(
        name: "realtime", summary: "LocationManager.realTimeUpdates(_:) calls its handler on the reader thread"
    ) { server, stamps in
        let manager = LocationManager(server: server)
        let subscription = manager.realTimeUpdates { fix in stamps.record(fix, at: StampRecorder.now()) }
        return Receiving { subscription.cancel() }
    }

    /// Runs `consume` on a task of its own with an `AsyncLocationManager` for `server`; stopping cancels the task,
    /// which ends its sequence, and waits until the manager has stopped.
    private static func consuming(
        _ server: GPSDServer, _ consume: @escaping @Sendable (AsyncLocationManager) async throws -> Void
    ) -> Receiving {
        let gps = AsyncLocationManager(server: server)
        let ended = DispatchSemaphore(value: 0)
        let task = Task.detached {
            do {
                try await consume(gps)
            } catch is CancellationError {
            } catch {
                printError("LatencyProbe: the sequence ended: \(error)")
            }
            await gps.stop()
            ended.signal()
        }
        return Receiving {
            task.cancel()
            ended.wait()   // on the probe's main thread, never on a task
        }
    }
}

/// A delegate that stamps every fix it is handed.
private final class StampingDelegate: LocationManagerDelegate {
    let stamps: StampRecorder

    init(_ stamps: StampRecorder) { self.stamps = stamps }

    func locationManager(_ manager: LocationManager, didUpdateLocations locations: [Location]) {
        let stamp = StampRecorder.now()
        for fix in locations { stamps.record(fix, at: stamp) }
    }

    func locationManager(_ manager: LocationManager, didFailWithError error: any Error) {
        printError("LatencyProbe: the delegate was told: \(error)")
    }
}

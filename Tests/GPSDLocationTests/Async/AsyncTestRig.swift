import Foundation
import GPSDLocation
import GPSDTestSupport

// The rig shared by the Async*Tests files: an AsyncLocationManager driven by hand, and how its requests end.

/// How one request ended.
enum AsyncOutcome: Sendable, Equatable, CustomStringConvertible {
    case fix(Location)
    case error(LocationError)
    case cancelled
    case unexpected(String)

    /// Runs `body` and captures how it ended.
    static func of(_ body: () async throws -> Location) async -> AsyncOutcome {
        do {
            return .fix(try await body())
        } catch let error as LocationError {
            return .error(error)
        } catch is CancellationError {
            return .cancelled
        } catch {
            return .unexpected(String(describing: error))
        }
    }

    var locationError: LocationError? {
        if case .error(let error) = self { error } else { nil }
    }

    var description: String {
        switch self {
        case .fix(let location): "fix \(location.shortDescription)"
        case .error(let error): "error \(error.code), best \(error.bestLocation?.shortDescription ?? "nil")"
        case .cancelled: "cancelled"
        case .unexpected(let text): "unexpected \(text)"
        }
    }
}

extension Location {
    /// The second of a `Location.sample` and its accuracy, for messages: "17 ±5.0".
    var shortDescription: String {
        let second = Int(timestamp.timeIntervalSince1970) - 1_748_779_200
        return "\(second) ±\(horizontalAccuracy.map { "\($0)" } ?? "?")"
    }
}

/// An `AsyncLocationManager` on a `ScriptedSource`, a `ManualManagerClock` and a `ManualClock` for timeouts.
struct AsyncRig: Sendable {
    let source: ScriptedSource
    let managerClock: ManualManagerClock
    let clock: ManualClock
    let gps: AsyncLocationManager

    /// A rig whose manager reconnects by `reconnect`: by default not at all, so that a failure ends every request
    /// and stream, as the race matrix and the stress models expect. Its session lingers `linger` after the last
    /// one-shot request: by default not at all, so that a request's end closes it at once.
    init(reconnect: ReconnectPolicy = .never, linger: Duration = .zero) {
        (source, managerClock, clock) = (ScriptedSource(), ManualManagerClock(), ManualClock())
        let manager = LocationManager(source: source, clock: managerClock, jitterSeed: 1)
        manager.reconnectPolicy = reconnect
        manager.sessionLinger = linger
        gps = AsyncLocationManager(manager: manager)
    }

    private init(_ rig: AsyncRig, gps: AsyncLocationManager) {
        (source, managerClock, clock, self.gps) = (rig.source, rig.managerClock, rig.clock, gps)
    }

    /// The same source, clocks and manager under a new `AsyncLocationManager`: what a test that goes on after
    /// `stop()` (which is final for the one it stopped) asks with.
    func renewed() -> AsyncRig { AsyncRig(self, gps: AsyncLocationManager(manager: gps.manager)) }

    /// Starts a request in a task of its own; the task's value is how it ended.
    func request(
        timeout: Duration = .seconds(10), maximumAge: Duration? = nil, desiredAccuracy: Double? = nil
    ) -> Task<AsyncOutcome, Never> {
        let (gps, clock) = (gps, clock)
        return Task {
            await AsyncOutcome.of {
                try await gps.requestLocation(
                    timeout: timeout, maximumAge: maximumAge, desiredAccuracy: desiredAccuracy, clock: clock)
            }
        }
    }
}

import GPSDLocation
import GPSDSystem

/// One call a ``LocationManager`` made on its delegate.
enum DelegateEvent: Sendable, Equatable, CustomStringConvertible {
    case locations([Location])
    case failure(LocationError)
    /// An error that was not a `LocationError`, by its description.
    case foreignError(String)

    var description: String {
        switch self {
        case .locations(let locations): "locations(\(locations))"
        case .failure(let error): "failure(\(error))"
        case .foreignError(let text): "foreignError(\(text))"
        }
    }
}

/// The calls a delegate received, in order; may outlive the delegate.
final class DelegateEventLog: Sendable {
    private let storage = Locked<[DelegateEvent]>([])
    private let statusStorage = Locked<[LocationStatus]>([])
    private let rejectionStorage = Locked<[FixRejection]>([])
    private let headingStorage = Locked<[Heading]>([])

    func append(_ heading: Heading) { headingStorage.withLock { $0.append(heading) } }

    /// The headings it was given, in order (kept apart from ``events``).
    var headings: [Heading] { headingStorage.withLock { $0 } }

    func append(_ rejection: FixRejection) { rejectionStorage.withLock { $0.append(rejection) } }

    /// The rejections it was told of, in order (kept apart from ``events``).
    var rejections: [FixRejection] { rejectionStorage.withLock { $0 } }

    func append(_ event: DelegateEvent) { storage.withLock { $0.append(event) } }

    func append(_ status: LocationStatus) { statusStorage.withLock { $0.append(status) } }

    var events: [DelegateEvent] { storage.withLock { $0 } }

    /// The status changes it was told of, in order (kept apart from ``events``).
    var statuses: [LocationStatus] { statusStorage.withLock { $0 } }

    /// Every fix delivered, flattened, in order.
    var locations: [Location] {
        events.flatMap { event -> [Location] in
            if case .locations(let locations) = event { return locations }
            return []
        }
    }

    /// Every `LocationError` received, in order.
    var errors: [LocationError] {
        events.compactMap { event in
            if case .failure(let error) = event { return error }
            return nil
        }
    }
}

/// A delegate that records every call, and optionally reacts to it (on the delegate queue).
final class DelegateRecorder: LocationManagerDelegate {
    let log: DelegateEventLog
    private let reaction: (@Sendable (LocationManager, DelegateEvent) -> Void)?

    init(
        log: DelegateEventLog = DelegateEventLog(),
        reaction: (@Sendable (LocationManager, DelegateEvent) -> Void)? = nil
    ) {
        self.log = log
        self.reaction = reaction
    }

    var events: [DelegateEvent] { log.events }
    var locations: [Location] { log.locations }
    var errors: [LocationError] { log.errors }
    var statuses: [LocationStatus] { log.statuses }
    var rejections: [FixRejection] { log.rejections }
    var headings: [Heading] { log.headings }

    func locationManager(_ manager: LocationManager, didUpdateHeading heading: Heading) {
        log.append(heading)
    }

    func locationManager(_ manager: LocationManager, didChangeStatus status: LocationStatus) {
        log.append(status)
    }

    func locationManager(_ manager: LocationManager, didRejectFixes rejection: FixRejection) {
        log.append(rejection)
    }

    func locationManager(_ manager: LocationManager, didUpdateLocations locations: [Location]) {
        record(.locations(locations), manager)
    }

    func locationManager(_ manager: LocationManager, didFailWithError error: any Error) {
        record((error as? LocationError).map(DelegateEvent.failure) ?? .foreignError(String(describing: error)), manager)
    }

    private func record(_ event: DelegateEvent, _ manager: LocationManager) {
        log.append(event)
        reaction?(manager, event)
    }
}

/// Hears of a ``GeofenceMonitor``'s events, as an alternative (or in addition) to
/// ``GeofenceMonitor/events(bufferingPolicy:)``.
///
/// The monitor calls it after deciding, with no lock held, one event at a time, in the order it decided them;
/// on the thread that caused them (the caller of ``GeofenceMonitor/process(_:)`` or ``GeofenceMonitor/add(_:)``)
/// or, while another thread is already delivering, on that thread. It may call the monitor back: events that
/// causes are delivered once the current call returns. `MonitorClock` is the monitor's clock type, inferred from
/// the method's signature.
///
/// ```swift
/// final class Doorbell: GeofenceMonitorDelegate {
///     func geofenceMonitor(_ monitor: GeofenceMonitor<ContinuousClock>,
///                          didChange event: GeofenceMonitor<ContinuousClock>.Event) {
///         if event.state == .inside, !event.isInitial { print("someone arrived at \(event.identifier)") }
///     }
/// }
/// ```
public protocol GeofenceMonitorDelegate<MonitorClock>: AnyObject, Sendable {
    /// The clock of the monitors this delegate serves.
    associatedtype MonitorClock: Clock where MonitorClock.Duration == Duration

    /// A region's initial state (``GeofenceEvent/isInitial``) or a change of its state.
    func geofenceMonitor(_ monitor: GeofenceMonitor<MonitorClock>, didChange event: GeofenceEvent<MonitorClock.Instant>)
}

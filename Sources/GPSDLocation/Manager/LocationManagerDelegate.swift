import GPSDCore

/// Receives fixes and errors from a ``LocationManager``, as `CLLocationManagerDelegate` does.
///
/// Methods are called on the manager's ``LocationManager/delegateQueue``, one at a time, in order.
///
/// ```swift
/// final class Printer: LocationManagerDelegate {
///     func locationManager(_ manager: LocationManager, didUpdateLocations locations: [Location]) {
///         print(locations.last!)
///     }
///     func locationManager(_ manager: LocationManager, didFailWithError error: any Error) {
///         print("error:", error)
///     }
/// }
/// ```
public protocol LocationManagerDelegate: AnyObject, Sendable {
    /// New fixes, oldest first; the last one is the newest.
    func locationManager(_ manager: LocationManager, didUpdateLocations locations: [Location])
    /// A failure that ends the watch; the error is a ``LocationError``. Transient conditions (a connection that
    /// failed and is being reconnected, a lost fix) come as status changes instead.
    func locationManager(_ manager: LocationManager, didFailWithError error: any Error)
    /// The manager's ``LocationManager/status`` changed, while the delegate has updates on or a request
    /// pending. Optional.
    func locationManager(_ manager: LocationManager, didChangeStatus status: LocationStatus)
}

extension LocationManagerDelegate {
    /// Does nothing: a delegate need not follow the status.
    public func locationManager(_ manager: LocationManager, didChangeStatus status: LocationStatus) {}
}

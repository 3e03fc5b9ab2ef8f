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
    /// A failure; the error is a ``LocationError``.
    func locationManager(_ manager: LocationManager, didFailWithError error: any Error)
}

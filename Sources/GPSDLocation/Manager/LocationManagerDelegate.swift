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
    /// Fixes keep coming, but ``LocationManager/desiredAccuracy`` has rejected every one for the manager's
    /// ``LocationManager/staleTimeout``: the delegate is not left wondering why it hears nothing. Told once, until
    /// a fix passes again. Optional.
    func locationManager(_ manager: LocationManager, didRejectFixes rejection: FixRejection)
    /// A new heading, while ``LocationManager/startUpdatingHeading()`` is on: one that differs by at least
    /// ``LocationManager/headingFilter`` from the last. Optional.
    func locationManager(_ manager: LocationManager, didUpdateHeading heading: Heading)
    /// One whole view of the satellites per receiver epoch (``LocationManager/sky``; the rule:
    /// ``AsyncLocationManager/satelliteUpdates()``), while the delegate has updates on or a request pending, as
    /// Android's `GnssStatus.Callback` and Qt's `satellitesInViewUpdated` tell them; an empty view of a receiver
    /// that went or lost its fix. Optional.
    func locationManager(_ manager: LocationManager, didUpdateSatellites sky: SkyView)
}

extension LocationManagerDelegate {
    /// Does nothing: a delegate need not follow the status.
    public func locationManager(_ manager: LocationManager, didChangeStatus status: LocationStatus) {}

    /// Does nothing: a delegate need not hear of rejected fixes.
    public func locationManager(_ manager: LocationManager, didRejectFixes rejection: FixRejection) {}

    /// Does nothing: a delegate need not follow the heading.
    public func locationManager(_ manager: LocationManager, didUpdateHeading heading: Heading) {}

    /// Does nothing: a delegate need not follow the satellites.
    public func locationManager(_ manager: LocationManager, didUpdateSatellites sky: SkyView) {}
}

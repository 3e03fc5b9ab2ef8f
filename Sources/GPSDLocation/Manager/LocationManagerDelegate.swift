import GPSDCore

/// Receives fixes and errors from a ``LocationManager``, as `CLLocationManagerDelegate` does.
///
/// Methods are called on the manager's ``LocationManager/delegateQueue``, one at a time, in the order decided; but
/// a fix that comes while a `didUpdateLocations` call still waits joins it, ahead of the headings and views decided
/// after that call and before the fix.
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
    ///
    /// Usually one. A delegate that is slower than fixes come (from a live gpsd) gets, in one call, the fixes that
    /// came since its last call, as CoreLocation gives a backlog: not a queue of calls that grows. It gets all of them
    /// unless they pile up: of the fixes waiting for it, the newest 16 are kept, and any that came 2 s ago or less, and
    /// at most 1024; older ones are dropped, counted in ``LocationManager/health`` (``LocationHealth/streamDrops``).
    /// A status change, a failure or a rejection waiting between two fixes keeps them in separate calls. A replay
    /// waits for the delegate instead, one fix a call, and drops none.
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
    /// ``LocationManager/headingFilter`` from the last. Optional. Of the headings waiting for a slow delegate, a
    /// live gpsd's keep what its fixes keep (the newest 16, any that came 2 s ago or less, at most 1024).
    func locationManager(_ manager: LocationManager, didUpdateHeading heading: Heading)
    /// One whole view of the satellites per receiver epoch (``LocationManager/sky``; the rule:
    /// ``AsyncLocationManager/satelliteUpdates()``), while the delegate has updates on or a request pending, as
    /// Android's `GnssStatus.Callback` and Qt's `satellitesInViewUpdated` tell them; an empty view of a receiver
    /// that went or lost its fix. Optional. Of the views waiting for a slow delegate, a live gpsd's keep what its
    /// fixes keep (the newest 16, any that came 2 s ago or less, at most 1024).
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

import GPSDCore
import GPSDSystem

extension LocationManager {
    /// How many degrees a heading must differ from the last one delivered to the delegate before
    /// ``startUpdatingHeading()`` delivers it (350° and 10° differ by 20°); `nil` or 0 delivers every one. Defaults
    /// to 1, as CoreLocation's `headingFilter` does.
    public var headingFilter: Double? {
        get { storage.configuration.headingFilter }
        set { storage.configure { $0.headingFilter = newValue } }
    }

    /// The newest heading gpsd reported, whatever the filter; `nil` before the first, and from a receiver
    /// without a compass, gyro or second antenna (gpsd sends no ATT then).
    public var heading: Heading? { storage.heading }

    /// Delivers every heading gpsd reports (its ATT reports) that passes ``headingFilter``, to the delegate's
    /// ``LocationManagerDelegate/locationManager(_:didUpdateHeading:)``, until ``stopUpdatingHeading()``. Watches
    /// gpsd as ``startUpdatingLocation()`` does, and independently of it: each keeps the watch while it is on.
    ///
    /// Course over ground is not heading: a receiver without a heading sensor gives none, however it moves.
    /// Which gpsd releases turn which receivers' output into headings: <doc:HeadingSources>.
    ///
    /// ```swift
    /// manager.headingFilter = 5      // degrees
    /// manager.startUpdatingHeading()
    /// ```
    public func startUpdatingHeading() {
        perform(storage.startUpdatingHeading())
    }

    /// Stops heading updates. Location updates and requests go on.
    ///
    /// When it returns, no heading callback decided before it begins any more, one that was running on another
    /// thread has returned, and if nothing else watches gpsd, the session's thread has ended. Called from inside
    /// a callback, it waits for no callback.
    public func stopUpdatingHeading() {
        stopDelegateCalls(headings: true)
    }
}

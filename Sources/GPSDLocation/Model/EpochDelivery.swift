/// When a stream of fixes passes on a receiver's epoch (one measurement cycle, one fix time).
///
/// gpsd sends several reports for one epoch as the receiver's sentences arrive (RMC, then GGA adds the
/// altitude, GST the receiver's error statistics). A stream can pass on each as it comes, or wait for the
/// epoch to be over and pass on its most complete record once.
///
/// ```swift
/// // A logger: one line per epoch, with every value the epoch brought.
/// for try await fix in gps.updates(delivery: .oncePerEpoch) { log.write(fix.jsonText) }
/// ```
public enum EpochDelivery: Sendable, Hashable, CaseIterable {
    /// As soon as possible: a fix when its epoch's first report arrives, and again when a later report of the
    /// same epoch adds a value the earlier one lacked. The least latency; the default.
    case asReported
    /// Once per epoch, its most complete record, when the epoch is known to be over: a report of a later
    /// epoch arrives, the receiver reports it lost the fix, the connection to gpsd ends, or the stream ends
    /// because its source did, or ``AsyncLocationManager/stop()`` ends the stream. Costs up to one epoch of
    /// latency (one second with a 1 Hz receiver). A consumer that breaks out of its loop (or whose task is
    /// cancelled) does not get the epoch still open; to end a logger without losing it, call `stop()` and read
    /// the stream to its end.
    case oncePerEpoch
}

extension Location {
    /// Whether two fixes are of the same receiver's same epoch (the same fix time).
    func isSameEpoch(as other: Location) -> Bool {
        timestamp == other.timestamp && device == other.device
    }
}

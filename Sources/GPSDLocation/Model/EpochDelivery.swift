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
    /// because its source did. Costs up to one epoch of latency (one second with a 1 Hz receiver). Receivers
    /// are held apart (by device). The epoch still open when the consumer stops (breaks out, is cancelled, or
    /// ``AsyncLocationManager/stop()`` ends the stream) is not passed on: it might yet have grown.
    case oncePerEpoch
}


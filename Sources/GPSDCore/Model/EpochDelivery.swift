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
    /// Once per epoch, its most complete record, when the epoch is known to be over: it has brought as many
    /// reports as each of the receiver's last two epochs (gpsd sends a receiver's cycle as the same run of reports
    /// every time), a report of a later epoch arrives, the receiver reports it lost the fix, the connection to gpsd
    /// ends, or the stream ends because its source did. Once a receiver's epochs are alike, an epoch is passed on
    /// as its last report arrives; until then, and for a receiver whose epochs differ, up to one epoch later (one
    /// second with a 1 Hz receiver). A report that comes after its epoch was passed on is not passed on again.
    /// Receivers are held apart (by device). When ``AsyncLocationManager/stop()`` ends the stream, the epoch still open
    /// is passed on as it stands (no later report reaches the stream), then the stream ends. A consumer that
    /// breaks out of its loop (or whose task is cancelled) does not get that epoch; to end a logger without
    /// losing it, call `stop()` (which ends every request and stream of that manager) and read the stream to its
    /// end.
    case oncePerEpoch
}


/// What a ``LocationManager`` did not pass on, and why: counted since it was made.
public struct ReportStatistics: Sendable, Hashable {
    /// Lines that were not gpsd reports (garbage, truncated or over-long lines), skipped.
    public var skippedLines = 0
    /// Fixes dropped because what gpsd sent cannot be true: a latitude beyond ±90°, a longitude beyond ±180°.
    public var rejectedFixes = 0
    /// Values set to `nil` because they cannot be true (a time that is not a calendar time, an absurd
    /// altitude, speed, course or accuracy), the rest of the fix being sound.
    public var rejectedValues = 0
    /// Fixes without a time (a receiver's first report of a session, before it knows the date), held back: a
    /// later report of the same cycle brings the time.
    public var fixesWithoutTime = 0
    /// SKY reports listing more satellites than libgps holds (its `MAXCHANNELS`: 140 up to gpsd 3.25, 184 from
    /// 3.26), from a newer gpsd or another server: each view kept the satellites libgps holds and the list's counts
    /// (``SkyView/isTruncated``).
    public var truncatedSkies = 0

    public init() {}
}

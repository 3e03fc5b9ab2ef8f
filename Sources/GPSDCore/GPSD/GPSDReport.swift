package import FoundationEssentials

/// One gpsd report, reduced to what the managers use. Internal: the public API speaks of ``Location``.
package enum GPSDReport: Sendable, Equatable {
    /// A TPV with a fix: mode ≥ 2 and a finite latitude and longitude.
    case fix(Location)
    /// A TPV with a fix but without a time (a receiver's first report of a session, before it knows the date):
    /// a fix cannot be placed among the others without one.
    case fixWithoutTime(device: String?)
    /// A TPV without a fix (mode 0 or 1, or no position), with its time if it had one.
    case noFix(device: String?, time: Date?)
    /// A GST report: the receiver's 1-sigma position errors for the epoch at `time`.
    case deviation(Location.Deviation, device: String?, time: Date?)
    /// An ATT report with a heading: its attitude, completed with the time and magnetic variation of the same
    /// receiver's newest TPV (since it was last added) where the ATT has none. `timed` says whether the heading's
    /// time is the ATT's own: gpsd 3.22's NMEA drivers never give one, and a heading sentence (`$GPHDT`) reaches
    /// gpsd after its epoch's fix, as it is measured.
    case attitude(Heading, timed: Bool)
    /// A SKY report: the satellites seen and used, and the DOPs. `listed` is whether it had a satellite list:
    /// gpsd 3.23 on also sends SKYs of DOPs and a used count alone (after an NMEA GGA or GSA), whose view has none.
    case sky(SkyView, listed: Bool)
    /// The VERSION banner: gpsd's release.
    case version(String)
    /// A DEVICES report: how many receivers gpsd has.
    case devices(count: Int)
    /// A DEVICE report: a receiver gpsd opened (`active`) or closed (gone: unplugged, or the end of a log).
    case device(path: String?, active: Bool)
    /// gpsd's ERROR report.
    case error(String)
    /// A POLL reply, with the TPVs it carried (each already a report) and gpsd's time of the poll.
    case poll(time: Date?, reports: [GPSDReport])
    /// Anything else (WATCH, PPS, an ATT without a heading, …), or a fix dropped because its position cannot be true.
    case other
}

public import Foundation

/// The files in the package's `Tests/Fixtures` directory (made by `Scripts/make-fixtures.py`).
///
/// | File | What it is |
/// |---|---|
/// | `moving.nmea` | 5 epochs without a fix, then 40 s of a 3D fix crossing the equator and the prime meridian |
/// | `twod.nmea` | 5 epochs without a fix, 10 of a 2D fix (no altitude), 5 of a 3D fix |
/// | `tenhz.nmea` | 30 epochs of a 3D fix at 10 Hz |
/// | `nofix.nmea` | 30 epochs that never get a fix |
/// | `drive.nmea` | 6 epochs without a fix, then a 174 s drive around Alexanderplatz, Berlin, with satellites |
/// | `gst.nmea` | 3 epochs without a fix, then 20 of a 3D fix, most with a `$GPGST` |
/// | `multignss.nmea` | 12 epochs of a 3D fix from a receiver of GPS (with SBAS and QZSS), GLONASS, Galileo and BeiDou in NMEA 4.10 |
/// | `NAME.expected.json` | the fixes of `NAME.nmea`: `time`, `latitude`, `longitude`, `altitudeMSL`, `speed` (m/s), `course`, `mode` |
/// | `multignss.sky.expected.json` | each epoch's satellites as the NMEA means them (``ExpectedSky``) |
/// | `NAME.gpsd.json` | what `gpspipe -w` received from a gpsd 3.22 replaying `NAME.nmea` (`moving`, `gst`, `multignss`) |
public enum Fixtures {
    /// The `Tests/Fixtures` directory, found relative to this source file.
    public static var directory: URL {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent()   // GPSDTestSupport
            .deletingLastPathComponent()   // Sources
            .deletingLastPathComponent()   // the package
            .appendingPathComponent("Tests/Fixtures", isDirectory: true)
    }

    /// URL of a file in Tests/Fixtures, e.g. `Fixtures.url("moving.nmea")`.
    public static func url(_ name: String) -> URL {
        directory.appendingPathComponent(name)
    }
}

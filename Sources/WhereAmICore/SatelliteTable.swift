import GPSDLocation

/// The satellites of `whereami --watch` as a table: a row each, its signal as a bar, those used in the fix first.
///
/// ```
/// GNSS      ID  PRN  Elev  Azim  C/N0  Signal      Used
/// GPS        5    5    45   123    38  ########..  yes
/// ```
enum SatelliteTable {
    /// The table's width in columns.
    static let width = header.count

    static let header = row("GNSS", "ID", "PRN", "Elev", "Azim", "C/N0", "Signal", "Used")

    /// The bar's length, and the C/N0 (dB-Hz) that fills it: 5 dB-Hz a mark, full from 50 (a strong signal).
    static let barLength = 10
    static let fullSignal = 50.0

    /// `satellites` in the table's order: used ones first, then by constellation and number, as cgps sorts them.
    static func sorted(_ satellites: [Satellite]) -> [Satellite] {
        let systems = Satellite.Constellation.allCases
        func key(_ satellite: Satellite) -> [Int] {
            [satellite.isUsed ? 0 : 1, systems.firstIndex(of: satellite.constellation) ?? 0, satellite.id]
        }
        return satellites.sorted { key($0).lexicographicallyPrecedes(key($1)) }
    }

    /// The header and a row per satellite, in at most `rows` lines: when they do not all fit, the last line says
    /// how many more there are (`+7 more`).
    static func lines(_ satellites: [Satellite], rows: Int) -> [String] {
        guard rows >= 2 else { return [] }
        let shown = satellites.count <= rows - 1 ? satellites.count : rows - 2
        var lines = [header] + satellites.prefix(shown).map(line)
        if shown < satellites.count { lines.append("+\(satellites.count - shown) more") }
        return lines
    }

    /// One satellite's row; a dash for what the receiver did not report.
    static func line(_ satellite: Satellite) -> String {
        func whole(_ value: Double?) -> String { value.map { WatchPanel.fixed($0, 0) } ?? "-" }
        return row(satellite.constellation.rawValue, "\(satellite.id)", "\(satellite.prn)", whole(satellite.elevation),
                   whole(satellite.azimuth), whole(satellite.signalStrength), bar(satellite.signalStrength),
                   satellite.isUsed ? "yes" : "no")
    }

    /// `#######...`: a mark per 5 dB-Hz of C/N0; empty for no signal.
    static func bar(_ signal: Double?) -> String {
        guard let signal, signal.isFinite else { return "" }
        let marks = Int((min(max(signal, 0), fullSignal) / fullSignal * Double(barLength)).rounded())
        return String(repeating: "#", count: marks) + String(repeating: ".", count: barLength - marks)
    }

    private static func row(
        _ system: String, _ id: String, _ prn: String, _ elevation: String, _ azimuth: String, _ signal: String,
        _ bar: String, _ used: String
    ) -> String {
        func right(_ text: String, _ width: Int) -> String {
            String(repeating: " ", count: max(0, width - text.count)) + text
        }
        return WatchPanel.padded(system, to: 8) + right(id, 4) + right(prn, 5) + right(elevation, 6)
            + right(azimuth, 6) + right(signal, 6) + "  " + WatchPanel.padded(bar, to: barLength) + "  "
            + WatchPanel.padded(used, to: 4)
    }
}

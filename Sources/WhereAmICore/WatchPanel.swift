import GPSDLocation

/// What `whereami --watch` shows: the last fix, the manager's status, the satellites and the heading, at a moment.
///
/// A value with no terminal behind it: ``lines(columns:rows:)`` lays it out for a screen of a given size, as the
/// exact text of each row, so the layout is tested as values (`WatchPanelTests`) and the terminal side
/// (``WatchScreen``) only writes what it returns.
///
/// ```swift
/// var panel = WatchPanel(source: "gpsd at localhost:2947", now: .now)
/// panel.location = fix
/// let rows = panel.lines(columns: 80, rows: 24)
/// ```
struct WatchPanel: Sendable {
    /// Where fixes come from, for the title: `gpsd at localhost:2947`, `replaying drive.gpsd.json`.
    var source: String
    /// The newest fix, if one has come.
    var location: Location?
    /// The manager's status.
    var status: LocationStatus = .connecting(attempt: 1)
    /// The satellites of the newest sky report, if one has come.
    var sky: SkyView?
    /// The newest heading, where gpsd reports one (an ATT: a compass, an IMU, a dual-antenna receiver); `nil`
    /// shows `n/a`. The course over ground is its own row, never shown as a heading.
    var heading: Heading?
    /// Set when the fixes have ended (the end of a recording): the status line says so.
    var ended = false
    /// The newest message the library logged (gpsd sent a value that cannot be true, say), shown on the row
    /// under the status line: standard error, where it would go otherwise, is the terminal the panel is on.
    var note: String?
    /// The moment the panel shows, against which the fix's age is measured.
    var now: ContinuousClock.Instant

    init(source: String, now: ContinuousClock.Instant) {
        self.source = source
        self.now = now
    }

    /// The widest the left column (the values, then the satellite table) grows.
    static let leftWidth = SatelliteTable.width
    /// Columns between the left column and the sky plot.
    static let gap = 2

    /// The panel laid out for a screen of `columns` × `rows`: at most `rows` lines, each at most `columns`
    /// characters, trailing spaces left out. The title, the status line and the fix's values come first; the sky
    /// plot stands right of them where the screen is wide enough; the satellite table fills the rows left, its
    /// last row saying how many more there are when they do not fit.
    func lines(columns: Int, rows: Int) -> [String] {
        guard columns > 0, rows > 0 else { return [] }
        var left = [title(columns: columns), statusLine, noteLine] + values
        let top = 3   // the title, the status line and the note (or a blank line) span the whole width
        var right: [String] = []
        if let plot = SkyPlot.fitting(columns: columns - Self.leftWidth - Self.gap, rows: rows - top) {
            right = plot.lines(sky?.satellites ?? [])
        }
        let satellites = SatelliteTable.sorted(sky?.satellites ?? [])
        if !satellites.isEmpty, rows - left.count >= 3 {
            left.append("")
            left += SatelliteTable.lines(satellites, rows: rows - left.count)
        }
        var lines: [String] = []
        for row in 0..<min(rows, max(left.count, top + right.count)) {
            var line = row < left.count ? left[row] : ""
            if row >= top, row - top < right.count {
                line = Self.padded(line, to: Self.leftWidth + Self.gap) + right[row - top]
            }
            lines.append(Self.trimmed(Self.clipped(line, to: columns)))
        }
        return lines
    }

    private func title(columns: Int) -> String {
        let name = "whereami --watch: " + Field.printable(source)
        let hint = "q quits"
        guard name.count + 2 + hint.count <= columns else { return name }
        return Self.padded(name, to: columns - hint.count) + hint
    }

    /// The manager's status, as `whereami --follow` says it on standard error, and the end of a recording.
    var statusLine: String {
        let said = ended ? "the recording has ended" : status.description
        return "Status      " + Field.printable(said)
    }

    /// The newest message logged, or nothing.
    var noteLine: String {
        note.map { "Log         " + Field.printable($0) } ?? ""
    }

    /// The fix's values, one per row, a dash for a value the fix does not have.
    var values: [String] {
        let l = location
        func row(_ name: String, _ value: String?) -> String {
            Self.padded(name, to: 12) + (value ?? "-")
        }
        let accuracy = [l?.horizontalAccuracy.map { "±" + Self.fixed($0, 1) + " m horizontal" },
                        l?.verticalAccuracy.map { "±" + Self.fixed($0, 1) + " m vertical" }].compactMap { $0 }
        let age = l?.arrival?.measured.map { $0.duration(to: now) }
        let dop = sky.map { sky in
            [("H", sky.dilution.horizontal), ("V", sky.dilution.vertical), ("P", sky.dilution.position)]
                .compactMap { name, value in value.map { "\(name) \(Self.fixed($0, 1))" } }
                .joined(separator: "  ")
        }
        return [
            row("Latitude", l.map { Self.degrees($0.coordinate.latitude, "N", "S") }),
            row("Longitude", l.map { Self.degrees($0.coordinate.longitude, "E", "W") }),
            row("Altitude", l?.altitude.map { Self.fixed($0, 1) + " m above sea level" }),
            row("Fix", l.map { "\($0.fix.rawValue), \($0.status.rawValue)" + ($0.device.map { " (\(Field.printable($0)))" } ?? "") }),
            row("Accuracy", accuracy.isEmpty ? nil : accuracy.joined(separator: ", ")),
            row("Speed", l?.speed.map { Self.fixed($0, 2) + " m/s (" + Self.fixed($0 * 3.6, 1) + " km/h)" }),
            row("Course", l?.course.map { Self.fixed($0, 1) + "°" }),
            row("Heading", heading.map(Self.heading) ?? "n/a"),
            row("Time", l.flatMap { Field.timestamp($0.timestamp) }),
            row("Age", age.map { Self.fixed(max(0, $0 / .seconds(1)), 1) + " s" }),
            row("Satellites", sky.map { "\($0.used) used of \($0.visible) in view" }),
        ] + systemRows + [
            row("DOP", dop.flatMap { $0.isEmpty ? nil : $0 }),
        ]
    }

    /// Each system's satellites used and in view (`GPS 5/8  GLONASS 4/6`), on as many rows as the left column
    /// needs; none before a view lists satellites.
    var systemRows: [String] {
        let counts = sky?.constellations.map { "\($0.constellation) \($0.used)/\($0.visible)" } ?? []
        guard !counts.isEmpty else { return [] }
        let room = Self.leftWidth - 12
        var rows: [String] = []
        var line = ""
        for count in counts {
            if !line.isEmpty, line.count + 2 + count.count > room {
                rows.append(line)
                line = ""
            }
            line += (line.isEmpty ? "" : "  ") + count
        }
        rows.append(line)
        return rows.enumerated().map { index, text in Self.padded(index == 0 ? "Systems" : "", to: 12) + text }
    }

    // MARK: - Text

    static func fixed(_ value: Double, _ digits: Int) -> String { JSONText.fixed(value, digits: digits) }

    /// `48.1173000° N`: the magnitude with seven decimals and the hemisphere.
    static func degrees(_ value: Double, _ positive: String, _ negative: String) -> String {
        fixed(abs(value), 7) + "° " + (value < 0 ? negative : positive)
    }

    static func padded(_ text: String, to width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }

    static func clipped(_ text: String, to width: Int) -> String {
        text.count <= width ? text : String(text.prefix(width))
    }

    static func trimmed(_ text: String) -> String {
        var text = Substring(text)
        while text.last == " " { text.removeLast() }
        return String(text)
    }

    /// `271.3° (268.1° mag) pitch 2.0° roll -1.5°`: the true heading and what else the heading has, short
    /// enough for the column beside the sky plot.
    static func heading(_ heading: Heading) -> String {
        var parts = [fixed(heading.trueHeading, 1) + "°"]
        if let magnetic = heading.magneticHeading { parts.append("(" + fixed(magnetic, 1) + "° mag)") }
        if let pitch = heading.pitch { parts.append("pitch " + fixed(pitch, 1) + "°") }
        if let roll = heading.roll { parts.append("roll " + fixed(roll, 1) + "°") }
        return parts.joined(separator: " ")
    }
}

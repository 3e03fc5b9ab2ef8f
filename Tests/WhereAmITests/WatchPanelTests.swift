import Foundation
import GPSDLocation
import Testing
@testable import WhereAmICore

/// `whereami --watch`'s panel laid out as values: what each row says, and how the layout follows the screen's size.
@Suite("whereami --watch: the panel's layout")
struct WatchPanelTests {
    static let start = ContinuousClock.now

    /// A sky of `count` satellites: GPS ones used, then GLONASS ones not, spread round the sky.
    static func sky(_ count: Int) -> SkyView {
        let satellites = (0..<count).map { index in
            index % 2 == 0
                ? Satellite(constellation: .gps, id: index + 1, prn: index + 1, elevation: Double(10 + index * 5),
                            azimuth: Double(index * 37 % 360), signalStrength: 40, isUsed: true)
                : Satellite(constellation: .glonass, id: index, prn: 64 + index, elevation: Double(5 + index * 3),
                            azimuth: Double(index * 53 % 360), signalStrength: 21, isUsed: false)
        }
        return SkyView(satellites: satellites, dilution: DilutionOfPrecision(horizontal: 0.9, vertical: 1.4))
    }

    static func panel(satellites: Int = 6) -> WatchPanel {
        var panel = WatchPanel(source: "gpsd at localhost:2947", now: start)
        var fix = Location(
            coordinate: .init(latitude: 48.1173, longitude: -11.5167), altitude: 545.4, horizontalAccuracy: 3.2,
            verticalAccuracy: 5.1, speed: 12.35, course: 84.4,
            timestamp: Date(timeIntervalSince1970: 1_748_779_205), fix: .threeDimensional, status: .dgps,
            device: "/dev/ttyUSB0")
        fix.arrival = Location.Arrival(instant: start.advanced(by: .milliseconds(-2500)), date: Date(), delay: .zero)
        panel.location = fix
        panel.status = .fix(.threeDimensional, .dgps)
        panel.sky = sky(satellites)
        return panel
    }

    /// The rows of `lines` as label → value, for the rows of the fix's values.
    static func values(_ lines: [String]) -> [String: String] {
        var rows: [String: String] = [:]
        for line in lines where line.count > 12 {
            let label = line.prefix(12).trimmingCharacters(in: .whitespaces)
            rows[label] = String(line.dropFirst(12).prefix(SatelliteTable.width - 12))
                .trimmingCharacters(in: .whitespaces)
        }
        return rows
    }

    @Test("each value of the fix on its row, with the status, the age and the satellites' counts and DOPs")
    func values() {
        let lines = Self.panel().lines(columns: 120, rows: 40)
        let rows = Self.values(lines)
        #expect(lines[0].hasPrefix("whereami --watch: gpsd at localhost:2947") && lines[0].hasSuffix("q quits"))
        #expect(lines[0].count == 120)
        #expect(rows["Status"] == "fix 3D dgps")
        #expect(rows["Latitude"] == "48.1173000° N")
        #expect(rows["Longitude"] == "11.5167000° W")
        #expect(rows["Altitude"] == "545.4 m above sea level")
        #expect(rows["Fix"] == "3D, dgps (/dev/ttyUSB0)")
        #expect(rows["Accuracy"] == "±3.2 m horizontal, ±5.1 m vertical")
        #expect(rows["Speed"] == "12.35 m/s (44.5 km/h)")
        #expect(rows["Course"] == "84.4°")
        #expect(rows["Heading"] == "n/a")
        #expect(rows["Time"] == "2025-06-01T12:00:05.000Z")
        #expect(rows["Age"] == "2.5 s")
        #expect(rows["Satellites"] == "3 used of 6 in view")
        #expect(rows["Systems"] == "GPS 3/3  GLONASS 0/3")
        #expect(rows["DOP"] == "H 0.9  V 1.4")
    }

    @Test("each system's satellites used and in view, on as many rows as the left column needs")
    func systemRows() {
        var panel = Self.panel()
        let systems: [Satellite.Constellation] = [.gps, .sbas, .galileo, .beidou, .qzss, .glonass]
        panel.sky = SkyView(satellites: systems.enumerated().flatMap { index, system in
            (1...(index + 2)).map { Satellite(constellation: system, id: $0, prn: $0, isUsed: $0 == 1) }
        })
        let rows = panel.systemRows
        #expect(rows == [
            "Systems     GPS 1/2  SBAS 1/3  Galileo 1/4",
            "            BeiDou 1/5  QZSS 1/6  GLONASS 1/7",
        ])
        #expect(rows.allSatisfy { $0.count <= WatchPanel.leftWidth })
        #expect(panel.lines(columns: 120, rows: 40).contains { $0.hasPrefix(rows[1]) })
        panel.sky = SkyView(satellites: [])   // cleared: the receiver went
        #expect(panel.systemRows.isEmpty)
    }

    @Test("a heading, once known, replaces n/a; the age follows the panel's moment")
    func headingAndAge() {
        var panel = Self.panel()
        panel.heading = Heading(trueHeading: 271.3)
        panel.now = Self.start.advanced(by: .seconds(10))
        var rows = Self.values(panel.lines(columns: 80, rows: 24))
        #expect(rows["Heading"] == "271.3°")
        #expect(rows["Course"] == "84.4°", "the course over ground stays its own row")
        #expect(rows["Age"] == "12.5 s")
        panel.heading = Heading(trueHeading: 46.5, magneticHeading: 43.25, pitch: 2, roll: -1.5)
        rows = Self.values(panel.lines(columns: 80, rows: 24))
        #expect(rows["Heading"] == "46.5° (43.2° mag) pitch 2.0° roll -1.5°")
        #expect(rows["Age"] == "12.5 s")
    }

    @Test("before any fix: dashes, and the status says what is awaited")
    func noFixYet() {
        var panel = WatchPanel(source: "replaying drive.gpsd.json", now: Self.start)
        panel.status = .waitingForFix(satellites: SatelliteCount(visible: 9, used: 2))
        let lines = panel.lines(columns: 80, rows: 24)
        let rows = Self.values(lines)
        #expect(lines[1] == "Status      waiting for a fix (2 of 9 satellites used)")
        for label in ["Latitude", "Longitude", "Altitude", "Fix", "Accuracy", "Speed", "Course", "Time", "Age",
                      "Satellites", "DOP"] {
            #expect(rows[label] == "-", "\(label): \(rows[label] ?? "no row")")
        }
        #expect(rows["Heading"] == "n/a")
        #expect(rows["Systems"] == nil, "no row before a view lists satellites")
    }

    @Test("the status line: reconnecting, stale, receiver gone, the end of a recording")
    func statusLines() {
        var panel = WatchPanel(source: "gpsd at localhost:2947", now: Self.start)
        let refused = LocationError(.gpsdUnavailable, "cannot connect to gpsd at localhost:2947: connection refused")
        let cases: [(LocationStatus, String)] = [
            (.reconnecting(attempt: 3, after: .milliseconds(500), because: refused),
             "reconnecting in 0.5 s (attempt 3): cannot connect to gpsd at localhost:2947: connection refused"),
            (.stale(silentFor: .seconds(5)), "no report for 5 s"),
            (.deviceGone(device: "/dev/ttyACM0"), "receiver gone (/dev/ttyACM0)"),
            (.connecting(attempt: 1), "connecting"),
        ]
        for (status, said) in cases {
            panel.status = status
            #expect(panel.lines(columns: 200, rows: 24)[1] == "Status      " + said)
        }
        panel.ended = true
        #expect(panel.lines(columns: 80, rows: 24)[1] == "Status      the recording has ended")
    }

    @Test("the newest message logged on the row under the status line, shown, never obeyed; the rows stay put")
    func note() {
        var panel = Self.panel()
        let before = panel.lines(columns: 120, rows: 40)
        #expect(before[2] == "")
        panel.note = "warning: gpsd sent a satellite's signal beyond 0 to 254 dB-Hz (300.0)\u{1B}[2J"
        let lines = panel.lines(columns: 120, rows: 40)
        #expect(lines[2] == "Log         warning: gpsd sent a satellite's signal beyond 0 to 254 dB-Hz (300.0)\u{FFFD}[2J")
        #expect(Array(lines[3...]) == Array(before[3...]), "the fix's values, the table and the plot where they were")
        #expect(panel.lines(columns: 40, rows: 24)[2] == "Log         warning: gpsd sent a satelli")
    }

    @Test("what gpsd names is shown, never obeyed: control characters in a device path are replaced")
    func hostileNames() {
        var panel = Self.panel()
        panel.location?.device = "/dev/tty\u{1B}[2J\u{7}"
        panel.status = .deviceGone(device: "/dev/x\u{1B}]0;owned\u{7}")
        let text = panel.lines(columns: 120, rows: 40).joined(separator: "\n")
        #expect(!text.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" })
        #expect(text.contains("/dev/tty\u{FFFD}[2J\u{FFFD}"))
    }

    @Test("the satellite table: used first, a signal bar, a row each")
    func satelliteTable() throws {
        let lines = Self.panel(satellites: 4).lines(columns: 60, rows: 40)
        let header = try #require(lines.firstIndex(of: SatelliteTable.header))
        let rows = Array(lines[(header + 1)...])
        #expect(rows == [
            "GPS        1    1    10     0    40  ########..  yes",
            "GPS        3    3    20    74    40  ########..  yes",
            "GLONASS    1   65     8    53    21  ####......  no",
            "GLONASS    3   67    14   159    21  ####......  no",
        ])
    }

    @Test("a signal bar: a mark per 5 dB-Hz, full from 50, empty without a signal")
    func signalBars() {
        #expect(SatelliteTable.bar(0) == "..........")
        #expect(SatelliteTable.bar(27) == "#####.....")
        #expect(SatelliteTable.bar(63) == "##########")
        #expect(SatelliteTable.bar(nil) == "")
    }

    @Test("every line fits its screen, and the panel never takes more rows than the screen has",
          arguments: [(20, 5), (40, 10), (60, 20), (79, 24), (80, 24), (100, 30), (120, 40), (200, 60)])
    func fitsTheScreen(columns: Int, rows: Int) {
        let lines = Self.panel(satellites: 30).lines(columns: columns, rows: rows)
        #expect(lines.count <= rows)
        for line in lines { #expect(line.count <= columns, "\(line)") }
        #expect(!lines.contains { $0.hasSuffix(" ") })
    }

    @Test("a short screen cuts the table, saying how many more there are")
    func shortScreenCutsTheTable() throws {
        let lines = Self.panel(satellites: 30).lines(columns: 60, rows: 24)
        #expect(lines.count == 24)
        #expect(lines.last == "+25 more", "\(lines)")   // below a row of the systems' counts
        let header = try #require(lines.firstIndex(of: SatelliteTable.header))
        #expect(lines.count - header - 2 == 30 - 25)
    }

    @Test("a narrow screen drops the sky plot; a wide one has it right of the values")
    func skyPlotNeedsWidth() {
        let narrow = Self.panel().lines(columns: 70, rows: 40)
        #expect(narrow.dropFirst(3).allSatisfy { $0.count <= SatelliteTable.width }, "\(narrow)")
        let wide = Self.panel().lines(columns: 80, rows: 40)
        let north = wide.firstIndex { $0.hasSuffix(" N") && $0.count > SatelliteTable.width }
        #expect(north == 3, "\(wide.joined(separator: "\n"))")
        #expect(wide.contains { $0.hasSuffix(" E") && $0.contains("W ") })
    }

    @Test("the sky plot: north up, east right, a satellite at its elevation and azimuth, capitals for used ones")
    func skyPlotPlaces() throws {
        let plot = SkyPlot(radius: 6, rows: 30)
        let satellites = [
            Satellite(constellation: .gps, id: 1, prn: 1, elevation: 90, azimuth: 0, isUsed: true),
            Satellite(constellation: .galileo, id: 2, prn: 302, elevation: 0, azimuth: 0, isUsed: true),
            Satellite(constellation: .glonass, id: 3, prn: 67, elevation: 0, azimuth: 90),
            Satellite(constellation: .beidou, id: 4, prn: 404, elevation: 0, azimuth: 180, isUsed: true),
            Satellite(constellation: .qzss, id: 5, prn: 197, elevation: 30, azimuth: 270),
            Satellite(constellation: .sbas, id: 131, prn: 131),   // no position in the sky: not drawn
        ]
        let lines = plot.lines(satellites)
        // "  " + 4r+1 cells: the centre is at column 2 + 2r, row 1 + r.
        func at(_ row: Int, _ column: Int) -> Character {
            let line = Array(lines[1 + row])
            return 2 + column < line.count ? line[2 + column] : " "
        }
        #expect(lines[0] == String(repeating: " ", count: 14) + "N")
        #expect(lines[14] == String(repeating: " ", count: 14) + "S")
        #expect(at(6, 12) == "G", "zenith at the centre")
        #expect(at(0, 12) == "E", "north on the horizon: top")
        #expect(at(6, 24) == "r", "east on the horizon: right, lower case as not used")
        #expect(at(12, 12) == "C", "south on the horizon: bottom")
        #expect(at(6, 4) == "j", "west at 30°: two thirds out, left")
        #expect(lines[7].hasPrefix("W ") && lines[7].hasSuffix(" E"))
        #expect(lines[15...].joined(separator: " ").contains("S SBAS") == false, "SBAS has no position: not drawn")
        #expect(lines[15...].joined(separator: " ").contains("capital: used"))
    }

    @Test("the sky plot grows with the screen, and needs room for its smallest size")
    func skyPlotSizes() {
        #expect(SkyPlot.fitting(columns: 20, rows: 40) == nil)
        #expect(SkyPlot.fitting(columns: 21, rows: 12) == SkyPlot(radius: 4, rows: 12))
        #expect(SkyPlot.fitting(columns: 21, rows: 11) == nil)
        #expect(SkyPlot.fitting(columns: 60, rows: 37)?.radius == 10)
        #expect(SkyPlot.fitting(columns: 41, rows: 100)?.radius == 9)
    }

    @Test("a redraw rewrites only the rows that changed and erases rows no longer used; the first clears the screen")
    func redraws() {
        let escape = "\u{1B}["
        #expect(TerminalModes.redraw(from: nil, to: ["a", "", "c"], columns: 10)
            == "\(escape)H\(escape)2J\(escape)1;1Ha\(escape)K\(escape)3;1Hc\(escape)K")
        #expect(TerminalModes.redraw(from: ["a", "", "c"], to: ["a", "b"], columns: 10)
            == "\(escape)2;1Hb\(escape)K\(escape)3;1H\(escape)K")
        #expect(TerminalModes.redraw(from: ["a", "b"], to: ["a", "b"], columns: 10) == "")
        // A full-width line leaves the cursor on its last character, which an erase would take.
        #expect(TerminalModes.redraw(from: ["a"], to: ["0123456789"], columns: 10) == "\(escape)1;1H0123456789")
    }
}

import FoundationEssentials
import Glibc
import GPSDLocation

/// The sky of `whereami --watch` drawn in text: a polar plot, north up and east right, the horizon its outer ring
/// and 30° and 60° of elevation the inner ones, each satellite the letter of its constellation (RINEX's: G GPS,
/// R GLONASS, E Galileo, C BeiDou, J QZSS, S SBAS, I NavIC, M IMES), a capital when the fix uses it.
///
/// A character cell is about twice as tall as it is wide, so the plot is twice as many columns wide as rows tall:
/// `radius` rows from the centre to the horizon, twice that in columns.
struct SkyPlot: Equatable {
    /// Rows from the centre to the horizon.
    var radius: Int
    /// The most rows the plot and its legend may take.
    var rows: Int

    static let smallestRadius = 4
    static let largestRadius = 10

    /// The columns a plot of `radius` takes: the circle and a compass letter and a space each side.
    static func width(radius: Int) -> Int { 4 * radius + 1 + 4 }
    /// The rows a plot of `radius` takes before its legend: the circle, and N above and S below.
    static func height(radius: Int) -> Int { 2 * radius + 1 + 2 }

    /// The largest plot that fits in `columns` × `rows` with a line of legend, or `nil` when even the smallest
    /// does not.
    static func fitting(columns: Int, rows: Int) -> SkyPlot? {
        var radius = largestRadius
        while radius >= smallestRadius, width(radius: radius) > columns || height(radius: radius) + 1 > rows {
            radius -= 1
        }
        return radius >= smallestRadius ? SkyPlot(radius: radius, rows: rows) : nil
    }

    /// The letter a satellite is drawn as: its constellation's, a capital when used in the fix.
    static func mark(_ satellite: Satellite) -> Character {
        let letter: Character = switch satellite.constellation {
        case .gps: "G"
        case .glonass: "R"
        case .galileo: "E"
        case .beidou: "C"
        case .qzss: "J"
        case .sbas: "S"
        case .navic: "I"
        case .imes: "M"
        case .unknown: "?"
        }
        return satellite.isUsed ? letter : Character(letter.lowercased())
    }

    /// The plot's lines, `satellites` drawn on it (those without an elevation or azimuth are left out), then a
    /// legend of the constellations drawn, as far as ``rows`` allows.
    func lines(_ satellites: [Satellite]) -> [String] {
        let size = (rows: 2 * radius + 1, columns: 4 * radius + 1)
        let centre = (row: radius, column: 2 * radius)
        var grid = Array(repeating: Array(repeating: Character(" "), count: size.columns), count: size.rows)

        /// The cell at `elevation`, `azimuth` (degrees).
        func cell(elevation: Double, azimuth: Double) -> (row: Int, column: Int) {
            let distance = (90 - min(max(elevation, 0), 90)) / 90 * Double(radius)
            let angle = azimuth * .pi / 180
            let row = centre.row - Int((distance * cos(angle)).rounded())
            let column = centre.column + Int((2 * distance * sin(angle)).rounded())
            return (min(max(row, 0), size.rows - 1), min(max(column, 0), size.columns - 1))
        }
        for elevation in [0.0, 30, 60] {
            for step in 0..<(8 * radius * 4) {
                let (row, column) = cell(elevation: elevation, azimuth: Double(step) * 360 / Double(8 * radius * 4))
                grid[row][column] = "."
            }
        }
        grid[centre.row][centre.column] = "+"
        // The used ones last, so that where two share a cell the one the fix uses shows.
        let drawn = satellites.compactMap { satellite in
            satellite.elevation.flatMap { elevation in
                satellite.azimuth.map { (satellite, elevation, $0) }
            }
        }.filter { $0.1.isFinite && $0.2.isFinite }
        for (satellite, elevation, azimuth) in drawn.sorted(by: { !$0.0.isUsed && $1.0.isUsed }) {
            let (row, column) = cell(elevation: elevation, azimuth: azimuth)
            grid[row][column] = Self.mark(satellite)
        }

        let margin = String(repeating: " ", count: 2 * radius + 2)
        var lines = [margin + "N"]
        for (row, cells) in grid.enumerated() {
            lines.append((row == centre.row ? "W " : "  ") + String(cells) + (row == centre.row ? " E" : ""))
        }
        lines.append(margin + "S")
        lines += legend(drawn.map(\.0), width: Self.width(radius: radius))
        return Array(lines.prefix(rows))
    }

    /// `G GPS  E Galileo  capital: used`, wrapped to `width`: the constellations drawn, in their order.
    private func legend(_ satellites: [Satellite], width: Int) -> [String] {
        let present = Set(satellites.map(\.constellation))
        let items = Satellite.Constellation.allCases.filter(present.contains).map { constellation in
            "\(Self.mark(Satellite(constellation: constellation, id: 0, prn: 0, isUsed: true))) \(constellation)"
        } + (present.isEmpty ? [] : ["capital: used"])
        var lines: [String] = []
        for item in items {
            if let last = lines.last, last.count + 2 + item.count <= width {
                lines[lines.count - 1] = last + "  " + item
            } else {
                lines.append(item)
            }
        }
        return lines
    }
}

import Foundation
import GPSDLocation
import Synchronization

/// A GPX 1.1 document written as the track grows: header at once, each point as it comes (flushed), segments
/// opened lazily, and the closing tags on ``close()``.
final class GPXFile: Sendable {
    private struct State {
        var handle: FileHandle?
        var inSegment = false
        var points = 0
        var segments = 0
    }

    private let state: Mutex<State>

    init(path: String, trackName: String) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil) else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path])
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        state = Mutex(State(handle: handle))
        write("""
            <?xml version="1.0" encoding="UTF-8"?>
            <gpx version="1.1" creator="GPSDLocation TrackRecorder" xmlns="http://www.topografix.com/GPX/1/1">
            <trk><name>\(Self.escaped(trackName))</name>

            """)
    }

    var pointCount: Int { state.withLock { $0.points } }
    var segmentCount: Int { state.withLock { $0.segments } }

    func append(_ fix: Location) {
        // xsd:decimal: fixed-point, never `1e-05` (Swift's text for small numbers, near the equator or meridian).
        let decimal = { (value: Double, digits: Int) in String(format: "%.\(digits)f", value) }
        var point = "<trkpt lat=\"\(decimal(fix.coordinate.latitude, 9))\" lon=\"\(decimal(fix.coordinate.longitude, 9))\">"
        if let altitude = fix.altitude { point += "<ele>\(decimal(altitude, 3))</ele>" }
        if let time = GPSDTime.string(from: fix.timestamp) { point += "<time>\(time)</time>" }
        point += "<fix>\(fix.fix == .threeDimensional ? "3d" : "2d")</fix></trkpt>\n"
        let opening = state.withLock { state -> Bool in
            defer { state.inSegment = true; state.points += 1 }
            if !state.inSegment { state.segments += 1 }
            return !state.inSegment
        }
        write((opening ? "<trkseg>\n" : "") + point)
    }

    /// Ends the current segment; the next point opens a new one.
    func endSegment() {
        let wasOpen = state.withLock { state in defer { state.inSegment = false }; return state.inSegment }
        if wasOpen { write("</trkseg>\n") }
    }

    /// Writes the closing tags, flushes and closes. Idempotent.
    func close() {
        endSegment()
        write("</trk>\n</gpx>\n")
        state.withLock { state in
            try? state.handle?.synchronize()
            try? state.handle?.close()
            state.handle = nil
        }
    }

    private func write(_ text: String) {
        state.withLock { state in try? state.handle?.write(contentsOf: Data(text.utf8)) }
    }

    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}

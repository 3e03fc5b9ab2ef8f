import ArgumentParser
import FoundationEssentials
import GPSDLocation

/// --sky: the satellites the receiver sees, once, instead of a fix.
struct SkyOptions: ParsableArguments {
    @Flag(help: "Print the satellites the receiver sees, once, instead of a fix.")
    var sky = false

    /// The formats that hold satellites; the others (csv, geojson, gpx) hold fixes.
    static let formats: [OutputFormat] = [.text, .json]

    /// --sky's refusals: it prints one report of satellites, in text or JSON, and takes no option about fixes.
    func check(request: RequestOptions, output: OutputOptions) throws {
        guard sky else { return }
        if request.follow { throw ValidationError("--sky prints the satellites once; --follow streams fixes") }
        if request.watch { throw ValidationError("--sky prints the satellites once; --watch draws them live") }
        if request.accuracy != nil || request.maxAge != nil {
            throw ValidationError("--accuracy and --max-age are about fixes, not --sky")
        }
        guard Self.formats.contains(output.format) else {
            throw ValidationError("--sky writes text or json, not \(output.format.rawValue)")
        }
    }
}

extension WhereAmI {
    /// What reaches --sky's wait.
    private enum SkyEvent: Sendable {
        case view(SkyView)
        /// The stream of fixes or the request ended: a failure (gpsd out of reach, the recording's end), or none.
        case ended((any Error)?)
        case deadline
    }

    /// --sky: waits, as one fix does (up to --timeout, 30 s by default), for the satellites: the first whole
    /// epoch's view that lists any (the library gathers an epoch's SKYs into one, ``AsyncLocationManager/satelliteUpdates()``),
    /// and writes it as a table or one JSON object (``SkyView/jsonText``).
    ///
    /// A one-shot request starts the watch, so gpsd out of reach fails at once as for one fix; a stream of fixes
    /// keeps the watch on after the request's fix.
    func printSky(from gps: AsyncLocationManager, to output: Output, status: StatusReporter) async throws {
        let timeout = request.firstFixTimeout
        status.say("waiting for the satellites" + (timeout.isUnlimited ? "" : " (up to \(timeout) s)"))
        let skies = gps.satelliteUpdates()
        let fixes = gps.updates(bufferingPolicy: .unbounded)
        let (events, sink) = AsyncStream.makeStream(of: SkyEvent.self)
        var result: Result<SkyView, any Error>?
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await view in skies { sink.yield(.view(view)) }
            }
            group.addTask {
                do {
                    for try await _ in fixes {}
                    sink.yield(.ended(nil))
                } catch { sink.yield(.ended(error)) }
            }
            group.addTask {
                do { _ = try await gps.requestLocation(timeout: AsyncLocationManager.noTimeout) } catch {
                    sink.yield(.ended(error))
                }
            }
            if !timeout.isUnlimited {
                group.addTask {
                    guard (try? await Task.sleep(for: timeout.duration)) != nil else { return }
                    sink.yield(.deadline)
                }
            }
            loop: for await event in events {
                switch event {
                case .view(let view):
                    // An empty view says the receiver went or lost its fix: nothing to print.
                    if !view.satellites.isEmpty { result = .success(view); break loop }
                case .ended(let error?) where !(error is CancellationError):
                    result = .failure(error)
                    break loop
                case .ended: continue
                case .deadline:
                    result = .failure(LocationError(.timedOut, "no satellites within \(timeout) s"))
                    break loop
                }
            }
            // Stopped before the tasks are cancelled: the stream of fixes, cancelled first, would close the session
            // in its cancellation handler, joining the reader thread while that thread hands it a fix.
            await gps.stop()
            group.cancelAll()
            sink.finish()
        }
        guard let result else { throw LocationError(.locationUnknown, "no satellites") }
        let view = try result.get()
        switch self.output.format {
        case .json: try output.write(view.jsonText + "\n")
        default: try output.write(SkyTable.text(view))
        }
    }
}

/// --sky's text: the counts, in all and per system, and the DOPs, then a row per satellite.
enum SkyTable {
    static let columns = ["System", "ID", "PRN", "Elev", "Azim", "C/N0", "Used", "Health"]

    static func text(_ sky: SkyView) -> String {
        var lines = ["Satellites: \(sky.used) used of \(sky.visible) visible"
                     + (sky.device.map { " (\(Field.printable($0)))" } ?? "")]
        // gpsd listed more than libgps holds: the rows are the first ones, the counts the whole list's.
        if sky.isTruncated { lines.append("Listed:     the first \(sky.satellites.count) (libgps holds no more)") }
        if !sky.constellations.isEmpty { lines.append("Systems:    " + systems(sky) + " (used/visible)") }
        let d = sky.dilution
        let dops = [("HDOP", d.horizontal), ("VDOP", d.vertical), ("PDOP", d.position), ("TDOP", d.time),
                    ("GDOP", d.geometric)].compactMap { name, value in value.map { "\(name) \(JSONText.fixed($0, digits: 2))" } }
        if !dops.isEmpty { lines.append("DOP:        " + dops.joined(separator: ", ")) }
        if let time = sky.timestamp.flatMap(Field.timestamp) { lines.append("Time:       " + time) }
        lines.append("")
        let rows = [columns] + sky.satellites.map { s in
            [s.constellation.rawValue, "\(s.id)", "\(s.prn)", degrees(s.elevation), degrees(s.azimuth),
             s.signalStrength.map { JSONText.fixed($0, digits: 0) } ?? "-", s.isUsed ? "yes" : "no",
             s.health?.rawValue ?? "-"]
        }
        let widths = columns.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            // The system left-aligned, the numbers right-aligned, the words left-aligned.
            let cells = row.enumerated().map { column, cell in
                let pad = String(repeating: " ", count: widths[column] - cell.count)
                return column == 0 || column >= 6 ? cell + pad : pad + cell
            }
            lines.append(cells.joined(separator: "  ").trimmingTrailingSpaces())
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `GPS 5/8, SBAS 0/1, Galileo 4/5`: each system's satellites used and in view.
    static func systems(_ sky: SkyView) -> String {
        sky.constellations.map { "\($0.constellation) \($0.used)/\($0.visible)" }.joined(separator: ", ")
    }

    private static func degrees(_ value: Double?) -> String {
        value.map { JSONText.fixed($0, digits: 0) } ?? "-"
    }
}

extension String {
    fileprivate func trimmingTrailingSpaces() -> String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}

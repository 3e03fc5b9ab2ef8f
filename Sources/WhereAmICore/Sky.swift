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
        case fix(Date)
        /// The stream of fixes or the request ended: a failure (gpsd out of reach, the recording's end), or none.
        case ended((any Error)?)
        case deadline
    }

    /// --sky: waits, as one fix does (up to --timeout, 30 s by default), for the satellites: the first report
    /// that lists any, completed by the rest of its epoch (``SkyWait``), and writes them as a table or one JSON
    /// object (``SkyView/jsonText``).
    ///
    /// A one-shot request starts the watch, so gpsd out of reach fails at once as for one fix; a stream of fixes
    /// keeps the watch on after the request's fix, and tells the epochs apart.
    func printSky(from gps: AsyncLocationManager, to output: Output, status: StatusReporter) async throws {
        let timeout = request.firstFixTimeout
        status.say("waiting for the satellites" + (timeout.isUnlimited ? "" : " (up to \(timeout) s)"))
        let skies = gps.satelliteUpdates()
        let fixes = gps.updates(bufferingPolicy: .unbounded)
        let (events, sink) = AsyncStream.makeStream(of: SkyEvent.self)
        var wait = SkyWait()
        var result: Result<SkyView, any Error>?
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await view in skies { sink.yield(.view(view)) }
            }
            group.addTask {
                do {
                    for try await fix in fixes { sink.yield(.fix(fix.timestamp)) }
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
                    if let complete = wait.view(view) { result = .success(complete); break loop }
                case .fix(let time):
                    if let complete = wait.fix(at: time) { result = .success(complete); break loop }
                case .ended(let error?) where !(error is CancellationError):
                    result = wait.held.map { .success($0) } ?? .failure(error)
                    break loop
                case .ended: continue
                case .deadline:
                    result = wait.held.map { .success($0) }
                        ?? .failure(LocationError(.timedOut, "no satellites within \(timeout) s"))
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

/// When --sky has the satellites: gpsd reports an epoch's satellites in several SKYs (gpsd 3.22 and 3.25 send
/// one after each system's GSV set: GPS and GLONASS, then Galileo added, then BeiDou), so the first report that
/// lists any may hold some systems only. The wait keeps the newest view of that epoch, and ends when the epoch
/// does: at a view that lists no more satellites than the one held (the next epoch starting over, or the same
/// satellites again), or at a fix later than the fix the held view came after.
struct SkyWait {
    /// The newest view of the epoch, once one listed satellites.
    private(set) var held: SkyView?
    /// The time of the fix the held view's epoch began with: the newest before it, or the first after it.
    private var epochFix: Date?
    private var newestFix: Date?

    /// A view: `nil` while the epoch may list more, or the view to print.
    mutating func view(_ view: SkyView) -> SkyView? {
        guard !view.satellites.isEmpty else { return nil }
        guard let held else {
            self.held = view
            epochFix = newestFix
            return nil
        }
        if view.satellites.count <= held.satellites.count {
            return view.satellites.count == held.satellites.count ? view : held
        }
        self.held = view
        return nil
    }

    /// A fix's time: `nil`, or the held view when the fix belongs to a later epoch.
    mutating func fix(at time: Date) -> SkyView? {
        newestFix = max(newestFix ?? time, time)
        guard let held else { return nil }
        guard let epochFix else {
            epochFix = time
            return nil
        }
        return time > epochFix ? held : nil
    }
}

/// --sky's text: the counts and DOPs, then a row per satellite.
enum SkyTable {
    static let columns = ["System", "ID", "PRN", "Elev", "Azim", "C/N0", "Used", "Health"]

    static func text(_ sky: SkyView) -> String {
        var lines = ["Satellites: \(sky.used) used of \(sky.visible) visible"
                     + (sky.device.map { " (\(Field.printable($0)))" } ?? "")]
        // gpsd listed more than libgps holds: the rows are the first ones, the counts the whole list's.
        if sky.isTruncated { lines.append("Listed:     the first \(sky.satellites.count) (libgps holds no more)") }
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

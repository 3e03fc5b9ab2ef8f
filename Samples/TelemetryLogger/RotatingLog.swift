import Foundation
import GPSDLocation
import SampleSupport
import Synchronization
import SystemPackage

/// Line-oriented log files that rotate by size and age. Each line goes out in one write(2) (retried until whole),
/// under a lock, so lines never interleave and a line is never split across files; a file is fsynced before it
/// is closed. A write that fails (a full disk) is reported on standard error and the line is lost, not torn:
/// the file is reopened for the next.
final class RotatingLog: Sendable {
    private struct State {
        var descriptor: Int32 = -1
        var bytes = 0
        var opened = ContinuousClock.now
        var sequence = 0
        var closed = false
    }

    let directory: URL
    let prefix: String
    let maxBytes: Int
    let maxAge: Duration?
    private let started: String
    private let state = Mutex(State())

    init(directory: URL, prefix: String, maxBytes: Int, maxAge: Duration?) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.directory = directory
        self.prefix = prefix
        self.maxBytes = maxBytes
        self.maxAge = maxAge
        let stamp = (GPSDTime.string(from: .now) ?? "").filter { $0.isNumber || $0 == "T" }
        started = String(stamp.prefix(15))   // 20261123T193400
    }

    /// Appends `line` and a newline.
    func append(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        state.withLock { state in
            guard !state.closed else { return }
            let tooOld = maxAge.map { state.opened.duration(to: .now) >= $0 } ?? false
            if state.descriptor >= 0, tooOld || (state.bytes > 0 && state.bytes + bytes.count > maxBytes) {
                closeFile(&state)
            }
            if state.descriptor < 0 { openFile(&state) }
            guard state.descriptor >= 0 else { return }
            do {
                _ = try FileDescriptor(rawValue: state.descriptor).writeAll(bytes)
                state.bytes += bytes.count
            } catch {
                // Part of the line may be in the file (a short write, then a full disk): cut it off.
                let number = (error as? Errno)?.rawValue ?? EIO
                report("TelemetryLogger", "cannot write the log: \(String(cString: strerror(number)))")
                _ = ftruncate(state.descriptor, off_t(state.bytes))
                closeFile(&state)
            }
        }
    }

    /// Flushes and closes the current file; later lines are dropped.
    func close() {
        state.withLock { state in
            closeFile(&state)
            state.closed = true
        }
    }

    private func openFile(_ state: inout State) {
        var path = ""
        // A name of its own: a logger started again within the same second finds the first one's files.
        repeat {
            state.sequence += 1
            let name = "\(prefix)-\(started)-\(String(format: "%04d", state.sequence)).ndjson"
            path = directory.appendingPathComponent(name).path
            state.descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0o644)
        } while state.descriptor < 0 && errno == EEXIST && state.sequence < 10_000
        state.bytes = 0
        state.opened = .now
        if state.descriptor < 0 { report("TelemetryLogger", "cannot create \(path): \(String(cString: strerror(errno)))") }
    }

    private func closeFile(_ state: inout State) {
        guard state.descriptor >= 0 else { return }
        fsync(state.descriptor)
        Foundation.close(state.descriptor)
        state.descriptor = -1
    }
}

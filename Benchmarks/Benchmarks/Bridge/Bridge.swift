import Benchmark
import CLibGPS
import Foundation
@_spi(Benchmarks) import GPSDLocation

// Each benchmark passes the same 1,000 fixes (a recording of 1,000 TPV reports, one an epoch) and scales its
// metrics by 1,000 (`.kilo`): every figure is per fix. Compare:
// - "updates()": the library's whole path for a replay: the reader thread decodes each report with libgps,
//   the manager decides, the async bridge yields, a task consumes;
// - "updates() without decoding": the manager fed the same fixes directly (16 a batch, as the replay's backlog
//   limit hands them on), no bytes, no libgps: the library's own part alone, the manager's decision and the bridge;
// - "AsyncStream baseline": the least such a bridge can cost: a thread yields the same fixes into a bare
//   AsyncThrowingStream that a task consumes;
// - "gps_unpack alone": libgps's own unpacking of the same lines, nothing else;
// - "decoding each kind of report": the library's decoding (libgps and its checks) of a TPV, a SKY, a GST and a
//   VERSION, 1,000 reports an iteration, not scaled (allocations counted exactly): reports that are not fixes
//   allocate nothing either;
// - "jsonText": formatting each fix as whereami's JSON line (`--format json` writes exactly this).

let fixCount = 1_000

/// 1,000 gpsd TPV reports, one a second from 2025-06-01T12:00:00Z, moving east.
let recording: [UInt8] = {
    let start = Date(timeIntervalSince1970: 1_748_779_200)
    let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
    var text = ""
    for second in 0..<fixCount {
        let time = start.addingTimeInterval(Double(second)).formatted(style)
        text += #"{"class":"TPV","device":"/dev/ttyUSB0","mode":3,"time":"\#(time)","ept":0.005,"#
            + #""lat":52.5,"lon":\#(13.25 + Double(second) * 0.0001),"altHAE":80.5,"altMSL":40.25,"#
            + #""epx":3.0,"epy":4.0,"eph":6.5,"epv":9.5,"track":90.0,"speed":7.0,"climb":0.0,"eps":0.5,"epc":1.0}"#
            + "\n"
    }
    return Array(text.utf8)
}()

/// One report of each kind a receiver's epoch brings, as gpsd 3.22 writes them.
let kinds: [[UInt8]] = [
    #"{"class":"TPV","device":"/dev/ttyUSB0","mode":3,"time":"2025-06-01T12:00:00.000Z","ept":0.005,"lat":52.5,"#
        + #""lon":13.25,"altHAE":80.5,"altMSL":40.25,"epx":3.0,"epy":4.0,"eph":6.5,"epv":9.5,"track":90.0,"speed":7.0}"#,
    #"{"class":"SKY","device":"/dev/ttyUSB0","time":"2025-06-01T12:00:00.000Z","xdop":0.6,"ydop":0.8,"hdop":1.0,"#
        + #""nSat":3,"uSat":2,"satellites":[{"PRN":5,"el":45.0,"az":120.0,"ss":40.0,"used":true},"#
        + #"{"PRN":12,"el":30.0,"az":200.0,"ss":35.0,"used":true},{"PRN":25,"el":10.0,"az":300.0,"ss":20.0,"used":false}]}"#,
    #"{"class":"GST","device":"/dev/ttyUSB0","time":"2025-06-01T12:00:00.000Z","rms":1.5,"major":3.0,"minor":2.0,"#
        + #""orient":45.0,"lat":2.5,"lon":2.0,"alt":4.0}"#,
    #"{"class":"VERSION","release":"3.22","rev":"3.22","proto_major":3,"proto_minor":14}"#,
].map { Array($0.utf8) }

/// The recording's lines, for gps_unpack (which writes into them while it parses).
let lines: [[CChar]] = recording.split(separator: UInt8(ascii: "\n")).map { $0.map { CChar(bitPattern: $0) } + [0] }

/// Replays the recording through `updates()`; returns the fixes.
func replay() async throws -> [Location] {
    let gps = AsyncLocationManager(recording: recording, named: "benchmark", pace: .asFastAsPossible)
    var fixes: [Location] = []
    fixes.reserveCapacity(fixCount)
    for try await fix in gps.updates(bufferingPolicy: .unbounded) { fixes.append(fix) }
    return fixes
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal, .mallocCountTotal, .throughput, .contextSwitches, .peakMemoryResident],
        scalingFactor: .kilo,   // 1,000 fixes (or reports) an iteration: every figure is per fix
        maxDuration: .seconds(3),
        maxIterations: 200
    )

    Benchmark("updates(): a replay's fixes to a consumer") { benchmark in
        let fixes = try await replay()
        precondition(fixes.count == fixCount, "\(fixes.count) fixes of \(fixCount)")
        blackHole(fixes)
    }

    Benchmark("updates() without decoding: the manager fed fixes directly") { benchmark, fixes in
        let gps = AsyncLocationManager(benchmarkFixes: fixes, batchSize: 16)
        var received = 0
        benchmark.startMeasurement()
        for try await fix in gps.updates(bufferingPolicy: .unbounded) {
            blackHole(fix)
            received += 1
        }
        benchmark.stopMeasurement()
        precondition(received == fixCount, "\(received) fixes of \(fixCount)")
    } setup: {
        try await replay()
    }

    Benchmark("AsyncStream baseline: a thread's fixes to a consumer") { benchmark, fixes in
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: Location.self, bufferingPolicy: .unbounded)
        Thread.detachNewThread {
            for fix in fixes { continuation.yield(fix) }
            continuation.finish()
        }
        var received = 0
        for try await fix in stream {
            blackHole(fix)
            received += 1
        }
        precondition(received == fixCount)
    } setup: {
        try await replay()
    }

    // Not scaled: its allocations are counted exactly, per 1,000 reports.
    Benchmark("decoding each kind of report: TPV, SKY, GST, VERSION",
              configuration: .init(scalingFactor: .one)) { benchmark in
        let decoder = try BenchmarkDecoder()
        benchmark.startMeasurement()
        for _ in 0..<(fixCount / kinds.count) {
            for line in kinds { precondition(decoder.decode(line[...])) }
        }
        benchmark.stopMeasurement()
    }

    Benchmark("jsonText: whereami --format json's line for each fix") { benchmark, fixes in
        for fix in fixes { blackHole(fix.jsonText) }
    } setup: {
        try await replay()
    }

    Benchmark("gps_unpack alone: libgps parsing the same reports") { benchmark in
        let data = clibgps_new()!
        defer { free(data) }
        var copies = lines.map { line in line.withUnsafeBufferPointer { Array($0) } }   // copied before measuring
        benchmark.startMeasurement()
        for index in copies.indices {
            copies[index].withUnsafeMutableBufferPointer { line in
                data.pointee.set = 0   // what the library's shim resets before each report, no more
                data.pointee.fix.mode = 0
                blackHole(clibgps_unpack(line.baseAddress, data))
            }
        }
        benchmark.stopMeasurement()
    }
}

import Dispatch
import GPSDLocation
import Glibc

// The Swift consumer of the latency benchmark in Scripts/compare-clients: receives fixes from a gpsd (the
// script's feeder) through one of the library's public APIs, stamps CLOCK_MONOTONIC as each arrives, and writes
// the stamps to a file once it has the fixes it was told to expect, or when SIGTERM or SIGINT cuts the run short.
//
//     LatencyProbe MODE HOST:PORT FIXES STAMPS-FILE

/// Writes `message` and a newline to standard error.
func printError(_ message: String) {
    var line = message + "\n"
    line.withUTF8 { _ = write(STDERR_FILENO, $0.baseAddress, $0.count) }
}

func usage() -> String {
    "usage: LatencyProbe MODE HOST:PORT FIXES STAMPS-FILE\n"
        + "Writes `fix-time-in-ms monotonic-ns` for each fix received. Modes (each fix stamped as):\n"
        + Mode.all.map { "  \($0.name): \($0.summary)" }.joined(separator: "\n")
}

func run(_ arguments: [String]) -> Int32 {
    guard arguments.count == 5, let mode = Mode.all.first(where: { $0.name == arguments[1] }),
          let server = try? GPSDServer(parsing: arguments[2]), let fixes = Int(arguments[3]), fixes > 0
    else {
        printError(usage())
        return 64
    }
    let stamps = StampRecorder(expected: fixes)
    // The script's deadline: stop, and write what came.
    let signals = [SIGTERM, SIGINT].map { number in
        signal(number, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
        source.setEventHandler { stamps.giveUp() }
        source.resume()
        return source
    }
    let receiving = mode.start(server, stamps)
    stamps.waitUntilComplete()
    receiving.stop()
    signals.forEach { $0.cancel() }
    guard stamps.write(to: arguments[4]) else {
        printError("LatencyProbe: cannot write \(arguments[4]): \(String(cString: strerror(errno)))")
        return 1
    }
    return 0
}

exit(run(CommandLine.arguments))

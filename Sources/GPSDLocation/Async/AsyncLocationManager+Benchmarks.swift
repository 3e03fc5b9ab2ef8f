import GPSDCore

@_spi(Benchmarks)
extension AsyncLocationManager {
    /// A manager fed `fixes` directly, `batchSize` at a time, on a thread of its own, as fast as its consumers take
    /// them: no bytes, no libgps. For benchmarks of the library's own part of a fix's way (the manager's decision
    /// and the async bridge), beside those of the whole way from a recording; not for programs.
    public convenience init(benchmarkFixes fixes: [Location], batchSize: Int) {
        self.init(manager: LocationManager(source: PreparedFixSource(fixes, batchSize: batchSize)))
    }
}

/// The library's decoding of gpsd's report lines (libgps's parse and the package's checks), for benchmarks of
/// what each kind of report costs; not for programs.
@_spi(Benchmarks)
public final class BenchmarkDecoder {
    private let decoder: ReportDecoder

    public init() throws(LocationError) { decoder = try ReportDecoder() }

    /// Decodes one line (without its newline): whether it was a gpsd report.
    public func decode(_ line: ArraySlice<UInt8>) -> Bool { decoder.decode(line) != nil }
}

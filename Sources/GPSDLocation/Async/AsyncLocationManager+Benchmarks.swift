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

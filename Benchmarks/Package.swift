// swift-tools-version:6.1
import Foundation
import PackageDescription

// GPSDLocation's benchmarks: a package of their own, so that the benchmark package is no dependency of the
// library's users. Run from the repository's root: `bash Scripts/benchmarks` (see Benchmarks/README.md).

// A path dependency is known by its directory's name: the checkout's, whatever it is called.
let root = URL(fileURLWithPath: Context.packageDirectory).deletingLastPathComponent()

let package = Package(
    name: "GPSDLocationBenchmarks",
    dependencies: [
        .package(path: root.path),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        // libgps itself, for the baseline of decoding: gps_unpack alone.
        .systemLibrary(name: "CLibGPS", pkgConfig: "libgps", providers: [.apt(["libgps-dev"])]),
        .executableTarget(
            name: "Bridge",
            dependencies: [
                .product(name: "GPSDLocation", package: root.lastPathComponent),
                .product(name: "Benchmark", package: "benchmark"),
                "CLibGPS",
            ],
            path: "Benchmarks/Bridge",
            swiftSettings: [.swiftLanguageMode(.v6)],
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // The Swift consumer of Scripts/compare-clients' latency benchmark: an ordinary program on the library's
        // public API (no benchmark plugin), which the script builds in release and runs against its feeder.
        .executableTarget(
            name: "LatencyProbe",
            dependencies: [.product(name: "GPSDLocation", package: root.lastPathComponent)],
            path: "Benchmarks/LatencyProbe",
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)

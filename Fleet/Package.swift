// swift-tools-version:6.1
import PackageDescription

// GPSDFleet: every vehicle's fixes in one queryable store. `fleet-uplink` runs on each vehicle: it keeps every fix
// gpsd reports in an on-disk queue and publishes it over MQTT at QoS 1 until the broker acknowledges it.
// `fleet-ingest` runs beside the database: it subscribes to every vehicle's fixes and writes them to PostgreSQL with
// PostGIS, acknowledging each message only after its row is committed.
//
// A package of its own beside GPSDLocation (which it depends on by path), so that building or testing the location
// library never builds PostgreSQL's, SwiftNIO's or SQLite's clients.
let package = Package(
    name: "GPSDFleet",
    products: [
        .library(name: "GPSDFleet", targets: ["FleetCore", "FleetUplink", "FleetIngest"]),
        .executable(name: "fleet-uplink", targets: ["FleetUplinkTool"]),
        .executable(name: "fleet-ingest", targets: ["FleetIngestTool"]),
    ],
    dependencies: [
        .package(name: "GPSDLocation", path: ".."),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        // The uplink's queue: SQLite in WAL mode.
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        // The ingest: PostgreSQL's client, and the SwiftNIO it runs on (the ingest's MQTT subscriber too).
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        // Both programs' --metrics-file: their swift-metrics in Prometheus's text format.
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // SIGINT and SIGTERM as an AsyncSequence, for both programs (UnixSignals alone, no SwiftNIO).
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // Tests only: starting and stopping Mosquitto, PostgreSQL, gpsfake and the two programs.
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.2"),
    ],
    targets: [
        // libmosquitto, the reference MQTT client in C, as libgps is used by the location library.
        .systemLibrary(
            name: "CMosquitto",
            pkgConfig: "libmosquitto",
            providers: [.apt(["libmosquitto-dev"])]
        ),
        // What both ends agree on: the payload (OwnTracks' location object, with the dedupe key), the topics, and
        // which values can be true.
        .target(
            name: "FleetCore",
            dependencies: [.product(name: "GPSDLocation", package: "GPSDLocation")]
        ),
        // The vehicle's end: the queue and the publisher.
        .target(
            name: "FleetUplink",
            dependencies: [
                "FleetCore", "CMosquitto",
                .product(name: "GPSDLocation", package: "GPSDLocation"),
                .product(name: "GPSDSystem", package: "GPSDLocation"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),
        // The server's end: the MQTT subscriber and the PostGIS writer.
        .target(
            name: "FleetIngest",
            dependencies: [
                "FleetCore",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),
        // What both programs share: the broker's options and configuration, --metrics-file, logging, the signals.
        .target(
            name: "FleetToolSupport",
            dependencies: [
                "FleetCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),
        .executableTarget(
            name: "FleetUplinkTool",
            dependencies: [
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                "FleetUplink", "FleetToolSupport", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"), .product(name: "GPSDSystem", package: "GPSDLocation"),
            ]
        ),
        .executableTarget(
            name: "FleetIngestTool",
            dependencies: [
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                "FleetIngest", "FleetToolSupport", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Scripts/fleet-benchmark: the figures beside mosquitto_pub and paho-mqtt, against real servers.
        .executableTarget(
            name: "FleetBench",
            dependencies: [
                "FleetCore", "FleetUplink", "FleetIngest", "FleetTestSupport",
                .product(name: "GPSDLocation", package: "GPSDLocation"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/FleetBench"
        ),
        // Real servers for the tests, each on a free loopback port: Mosquitto, PostgreSQL with PostGIS, gpsfake.
        // Its folder Portable is a link to GPSDLocation's Sources/GPSDTestSupport/Portable (free loopback ports,
        // scratch directories, the built programs): one source, built into both packages' test support, so that
        // GPSDLocation ships no test library.
        .target(
            name: "FleetTestSupport",
            dependencies: [.product(name: "Subprocess", package: "swift-subprocess")]
        ),
        // MARK: Fuzzing (Scripts/fleet-fuzz)

        // What each fleet fuzz target checks of one input; the fuzz targets below and FleetFuzzCheckTests run it.
        .target(
            name: "FleetFuzzChecks",
            dependencies: [
                "FleetCore", "FleetIngest",
                .product(name: "GPSDLocation", package: "GPSDLocation"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            path: "Fuzz/Checks"
        ),
        // Every input of Fuzz/Corpus and Fuzz/FailCases through its fuzz target's check, in a child process.
        .testTarget(name: "FleetFuzzCheckTests", dependencies: ["FleetFuzzChecks"]),
        .testTarget(
            name: "FleetTests",
            dependencies: [
                "FleetCore", "FleetUplink", "FleetIngest", "FleetTestSupport",
                .product(name: "GPSDLocation", package: "GPSDLocation"),
                .product(name: "GPSDSystem", package: "GPSDLocation"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "Subprocess", package: "swift-subprocess"),
                // A queue file of an older layout, written as that layout's uplink wrote it.
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOTestUtils", package: "swift-nio"),
            ]
        ),
    ]
)

// libFuzzer's targets (Scripts/fleet-fuzz builds them with -sanitize=fuzzer,address): they join the package only
// then, since without libFuzzer they have no main.
if Context.environment["GPSDFLEET_FUZZ"] != nil {
    for name in ["FuzzFleetMQTT", "FuzzFleetMessage", "FuzzFleetBroker"] {
        package.targets.append(.executableTarget(name: name, dependencies: ["FleetFuzzChecks"], path: "Fuzz/Targets/\(name)"))
    }
}

for target in package.targets where target.type != .system {
    var settings = target.swiftSettings ?? []
    settings.append(contentsOf: [
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("MemberImportVisibility"),
        .enableUpcomingFeature("InternalImportsByDefault"),
    ])
    target.swiftSettings = settings
}
package.swiftLanguageModes = [.v6]

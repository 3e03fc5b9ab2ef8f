// swift-tools-version:6.1
import PackageDescription

// Linux only: gpsd and its libgps are Linux's, and the system layer calls Linux (glibc) directly. A build
// elsewhere stops at Sources/GPSDSystem/Syscall.swift with a message saying so.
let package = Package(
    name: "GPSDLocation",
    products: [
        .library(name: "GPSDLocation", targets: ["GPSDLocation"]),
        // The calls into Linux that the library, whereami and the fleet (Fleet/) share: the lock, the joinable
        // thread, the wake pipe, poll(2) and its timeouts, system errors.
        .library(name: "GPSDSystem", targets: ["GPSDSystem"]),
        .executable(name: "whereami", targets: ["whereami"]),
        .executable(name: "TelemetryLogger", targets: ["TelemetryLogger"]),
        .executable(name: "TrackRecorder", targets: ["TrackRecorder"]),
        .executable(name: "GeofenceWatcher", targets: ["GeofenceWatcher"]),
        .executable(name: "RobotPose", targets: ["RobotPose"]),
        .executable(name: "FleetHealth", targets: ["FleetHealth"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // The library logs values gpsd sent that cannot be true, once per kind.
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // The library reports its health (reconnects, fixes, time in each status, drops) through swift-metrics, to
        // whichever backend the program bootstraps; tests read it back through MetricsTestKit.
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        // Tests only: starting, signalling and reaping gpsfake, whereami, gpspipe and python.
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.2"),
        // TelemetryLogger writes its log files with its FileDescriptor.writeAll (write(2), retried); tests spawn with it.
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        // whereami --watch: SIGWINCH/SIGCONT as an AsyncSequence (UnixSignals); TelemetryLogger and TrackRecorder
        // stop cleanly with a ServiceGroup.
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // Samples only: FleetHealth writes its gauges in Prometheus's text format.
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // Tests only: property-based tests of the model, with generators that shrink a failing input.
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
    ],
    targets: [
        // MARK: - System library

        .systemLibrary(
            name: "CGPS",
            pkgConfig: "libgps",
            providers: [.apt(["libgps-dev"])]
        ),

        // The GNU extensions of glibc that Swift's Glibc module leaves out (pipe2, thread names, gettid).
        .target(name: "CLinux"),

        // MARK: - Library: three layers, each using only the ones below it (Documentation/Architecture.md)

        // The calls into Linux: system calls that throw SystemError, a joinable thread, socket addresses, the lock.
        .target(name: "GPSDSystem", dependencies: ["CLinux"]),
        // gpsd's protocol and the libgps boundary, the values users see (Location, LocationError, GPSDServer, …),
        // and the sessions that produce reports (a live gpsd, a recording).
        .target(name: "GPSDCore", dependencies: ["GPSDSystem", "CGPS"]),
        // The manager, the async bridge and geofences. It re-exports GPSDCore (Exports.swift), so that
        // `import GPSDLocation` is the one import users need.
        .target(
            name: "GPSDLocation",
            dependencies: [
                "GPSDCore", "GPSDSystem", .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),

        // MARK: - Command-line tool

        // The command is a library, so that its tests and fuzz targets can link it; the executable only runs it.
        .executableTarget(name: "whereami", dependencies: ["WhereAmICore"]),
        .target(
            name: "WhereAmICore",
            dependencies: [
                "GPSDLocation", "GPSDSystem", "CDemoRecording", "ProcessEnd",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            // The demo recording is built into the program (CDemoRecording), so a copied binary runs --demo with
            // nothing beside it.
            exclude: ["Resources"]
        ),
        // How whereami and the samples end: SIGINT, SIGTERM and SIGHUP answered within a bound whatever their output
        // does, output that never waits past that, the terminal put back on a crash. The signal handlers are C
        // (async-signal-safe); of the library it uses the system layer alone, through its public product
        // (Scripts/check-public-api).
        .target(name: "ProcessEnd", dependencies: ["CProcessEnd", "GPSDSystem"]),
        .target(name: "CProcessEnd"),
        // whereami's demo recording as C data (#embed): it compiles in a moment, where a Swift array literal of it
        // (SwiftPM's embedInCode) took minutes in every debug build.
        .target(name: "CDemoRecording"),

        // MARK: - Samples (Samples/README.md)

        // What every sample shares: where the fixes come from (gpsd, or a recording), as an @OptionGroup.
        .target(
            name: "SampleSupport",
            dependencies: [
                "GPSDLocation", "ProcessEnd", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Samples/SampleSupport"
        ),
        sample("TelemetryLogger", lifecycle + [.product(name: "SystemPackage", package: "swift-system")]),
        sample("TrackRecorder", lifecycle),
        sample("GeofenceWatcher"),
        sample("RobotPose"),
        sample("FleetHealth", [
            .product(name: "Prometheus", package: "swift-prometheus"),
            .product(name: "CoreMetrics", package: "swift-metrics"),
        ]),

        // MARK: - Fuzzing (Scripts/fuzz)

        // What each fuzz target checks of one input; the fuzz targets below and FuzzCheckTests run it.
        .target(
            name: "FuzzChecks",
            dependencies: ["GPSDCore", "WhereAmICore", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Fuzz/Checks"
        ),

        // MARK: - Test support and tests

        .target(
            name: "GPSDTestSupport",
            dependencies: [
                "GPSDLocation", "GPSDSystem",
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // Deterministic: scripted sources, manual clocks, loopback peers of our own. Run whole under TSan.
        .testTarget(
            name: "GPSDLocationTests",
            dependencies: [
                "GPSDLocation", "GPSDCore", "GPSDSystem", "GPSDTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        // A million reports through the live path, measuring memory (not under TSan: it would take too long).
        .testTarget(
            name: "GPSDLocationSoakTests",
            dependencies: ["GPSDLocation", "GPSDTestSupport"]
        ),
        // Against a real gpsd, fed by gpsfake.
        .testTarget(
            name: "GPSDLocationLiveTests",
            dependencies: [
                "GPSDLocation", "GPSDSystem", "GPSDTestSupport",
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ]
        ),
        // Each sample as a process, against a real gpsd (gpsfake), its output read back with a real parser.
        .testTarget(
            name: "SamplesTests",
            dependencies: [
                "GPSDLocation", "GPSDTestSupport",
                "TelemetryLogger", "TrackRecorder", "GeofenceWatcher", "RobotPose", "FleetHealth",
            ]
        ),
        // Every input of Fuzz/Corpus and Fuzz/FailCases through its fuzz target's check, in a child process.
        .testTarget(name: "FuzzCheckTests", dependencies: ["FuzzChecks"]),
        // whereami in-process (parsing, writers) and as a process, against recordings and a real gpsd.
        .testTarget(
            name: "WhereAmITests",
            dependencies: [
                "whereami", "WhereAmICore", "GPSDLocation", "GPSDTestSupport", "ProcessEnd", "CProcessEnd",
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
    ]
)

/// A sample: an executable target in Samples/NAME on the library, the samples' shared options and `extra`.
func sample(_ name: String, _ extra: [Target.Dependency] = []) -> Target {
    .executableTarget(
        name: name,
        dependencies: ["GPSDLocation", "SampleSupport", "ProcessEnd",
                       .product(name: "ArgumentParser", package: "swift-argument-parser")] + extra,
        path: "Samples/\(name)"
    )
}

/// What TelemetryLogger and TrackRecorder use to stop cleanly: a ServiceGroup.
var lifecycle: [Target.Dependency] {
    [.product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
     .product(name: "Logging", package: "swift-log")]
}

// libFuzzer's targets, built by Scripts/fuzz with -sanitize=fuzzer,address (whose main is libFuzzer's): they join the
// package only then, since without libFuzzer they have no main.
if Context.environment["GPSDLOCATION_FUZZ"] != nil {
    for name in ["FuzzDecoder", "FuzzJSON", "FuzzServer", "FuzzArguments"] {
        package.targets.append(.executableTarget(name: name, dependencies: ["FuzzChecks"], path: "Fuzz/Targets/\(name)"))
    }
}

// Settings every target shares: Swift 6 language mode and the upcoming features we opt into.
let cTargets = ["CLinux", "CDemoRecording", "CProcessEnd"]
for target in package.targets where target.type != .system && !cTargets.contains(target.name) {
    var settings = target.swiftSettings ?? []
    settings.append(contentsOf: [
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("MemberImportVisibility"),
        .enableUpcomingFeature("InternalImportsByDefault"),
    ])
    target.swiftSettings = settings
}
package.swiftLanguageModes = [.v6]
// Scripts/check-public-api builds whereami's and the samples' sources in a package of its own that depends on this
// one by path and sees only its library. For that package, this one declares the library alone (its product and the
// targets it is built from), so that no target's name is declared twice in the graph.
if Context.environment["GPSDLOCATION_LIBRARY_ONLY"] != nil {
    package.products.removeAll { !($0 is Product.Library) }
    var needed = Set(package.products.compactMap { $0 as? Product.Library }.flatMap(\.targets))
    var unvisited = Array(needed)
    while let name = unvisited.popLast() {
        for dependency in package.targets.first(where: { $0.name == name })?.dependencies ?? [] {
            switch dependency {
            case .targetItem(let name, _), .byNameItem(let name, _):
                if needed.insert(name).inserted { unvisited.append(name) }
            default: break
            }
        }
    }
    package.targets.removeAll { !needed.contains($0.name) }
}

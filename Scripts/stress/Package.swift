// swift-tools-version:6.1
import PackageDescription

// Scripts/start-stress builds this in release and in debug: a process that starts many managers and replays at once,
// so that each start races the Swift runtime's first-time initializations (Documentation/Testing.md).
let package = Package(
    name: "StartStress",
    dependencies: [.package(name: "GPSDLocation", path: "../..")],
    targets: [
        .executableTarget(
            name: "start-stress",
            dependencies: [.product(name: "GPSDLocation", package: "GPSDLocation")]
        ),
    ],
    swiftLanguageModes: [.v6]
)

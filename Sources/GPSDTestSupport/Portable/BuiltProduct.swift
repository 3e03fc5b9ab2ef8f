public import Foundation

/// The package's executables (whereami, the samples; a package built on this one: its own) that
/// `swift build --build-tests` put next to the test bundle.
///
/// Found from the test process's own executable (`/proc/self/exe`), so any `--scratch-path` works.
public enum BuiltProduct {
    /// The built executable `name`, in the test bundle's directory or one above it.
    public static func url(_ name: String) -> URL {
        let executable = URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = executable.deletingLastPathComponent()
        while directory.path != "/" {
            let candidate = directory.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return executable.deletingLastPathComponent().appendingPathComponent(name)
    }
}

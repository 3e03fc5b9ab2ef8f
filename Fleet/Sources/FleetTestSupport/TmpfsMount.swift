public import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A tmpfs of a given size mounted on a directory of its own, for a test of a full disk; root only (CI runs as root).
/// Unmounted and removed by ``unmount()``.
public final class TmpfsMount: Sendable {
    /// Where it is mounted.
    public let directory: URL

    /// Whether this process may mount one: it runs as root and a trial mount works (a container may forbid it).
    public static let isPossible: Bool = {
        guard geteuid() == 0, let trial = try? TmpfsMount(size: "64k") else { return false }
        trial.unmount()
        return true
    }()

    /// Mounts a tmpfs of `size` (mount(8)'s `size=`: `512k`, `64m`) on a new directory.
    public init(size: String) throws {
        directory = try makeServerDirectory("tmpfs")
        do {
            try runQuietly("/bin/mount", ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", directory.path])
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
    }

    /// Gives it room: its size becomes `size`, what it holds kept.
    public func resize(to size: String) throws {
        try runQuietly("/bin/mount", ["-o", "remount,size=\(size)", directory.path])
    }

    /// Unmounts it and removes its directory.
    public func unmount() {
        try? runQuietly("/bin/umount", [directory.path])
        try? FileManager.default.removeItem(at: directory)
    }
}

import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension GPSFake {
    /// Stops gpsd alone with SIGSTOP, as a gpsd that hangs would: gpsfake goes on feeding its log into the
    /// receiver's pseudo-terminal, so after ``resumeGPSD()`` gpsd reads the backlog and sends its fixes late, each
    /// as old as the receiver made it. Returns whether gpsd was found (a member of gpsfake's group named `gpsd`).
    @discardableResult
    public func suspendGPSD() -> Bool { signalGPSD(SIGSTOP) }

    /// Lets a gpsd stopped by ``suspendGPSD()`` go on (SIGCONT).
    @discardableResult
    public func resumeGPSD() -> Bool { signalGPSD(SIGCONT) }

    private func signalGPSD(_ signal: Int32) -> Bool {
        let daemons = (ProcFS.members(of: processID) ?? []).filter {
            ProcFile.read("/proc/\($0)/comm")?.trimmingCharacters(in: .whitespacesAndNewlines) == "gpsd"
        }
        for pid in daemons { kill(pid, signal) }
        return !daemons.isEmpty
    }
}

import GPSDCore

/// The ``LocationStatus`` of a manager, from what its sessions report: each input returns the new status if it
/// changed, `nil` if not.
struct StatusTracker {
    /// What the reports say, apart from silence.
    private var base = LocationStatus.stopped
    /// Set while no report came for the stale timeout.
    private var silence: Duration?
    private var satellites: SatelliteCount?

    var current: LocationStatus { silence.map { .stale(silentFor: $0) } ?? base }

    /// Sets the status from reports; any report ends a silence.
    private mutating func set(_ status: LocationStatus) -> LocationStatus? {
        let before = current
        base = status
        silence = nil
        return current == before ? nil : current
    }

    mutating func connecting(attempt: Int) -> LocationStatus? {
        satellites = nil
        return set(.connecting(attempt: attempt))
    }

    mutating func connected() -> LocationStatus? { set(.connected(gpsdVersion: nil)) }

    /// The session ended: the satellites it counted are forgotten.
    mutating func reconnecting(attempt: Int, after delay: Duration, because error: LocationError) -> LocationStatus? {
        satellites = nil
        return set(.reconnecting(attempt: attempt, after: delay, because: error))
    }

    mutating func stopped() -> LocationStatus? {
        satellites = nil
        return set(.stopped)
    }

    /// No report for `duration`. A receiver gone, or none at all, keeps its status: gpsd has nothing to report
    /// then, and the silence is what it says, not news; it lasts until a receiver reports again.
    mutating func stale(for duration: Duration) -> LocationStatus? {
        switch base {
        case .deviceGone, .noDevice: return nil
        default: break
        }
        guard silence == nil else { return nil }
        silence = duration
        return current
    }

    /// A report that changes nothing of the status still ends a silence.
    mutating func reportArrived() -> LocationStatus? {
        // Nearly every report: nothing to compare (or copy) when no silence ends.
        guard silence != nil else { return nil }
        return set(base)
    }

    mutating func version(_ release: String) -> LocationStatus? {
        guard case .connected = base else { return reportArrived() }
        return set(.connected(gpsdVersion: release))
    }

    mutating func devices(count: Int) -> LocationStatus? {
        if count == 0 {
            satellites = nil
            return set(.noDevice)
        }
        return waitingUnlessFixing()
    }

    /// A receiver that goes takes its satellite count with it: one that comes back is waiting afresh.
    mutating func device(_ path: String?, active: Bool) -> LocationStatus? {
        guard active else {
            satellites = nil
            return set(.deviceGone(device: path))
        }
        return waitingUnlessFixing()
    }

    mutating func sky(_ count: SatelliteCount) -> LocationStatus? {
        satellites = count
        if case .waitingForFix = base { return set(.waitingForFix(satellites: count)) }
        return reportArrived()
    }

    /// A report from the receiver without a fix: after a fix, the fix is lost (once), and the satellites counted
    /// with it are forgotten; otherwise still waiting.
    mutating func noFix() -> LocationStatus? {
        switch base {
        case .fix:
            satellites = nil
            return set(.fixLost)
        case .fixLost: return set(.fixLost)
        default: return set(.waitingForFix(satellites: satellites))
        }
    }

    mutating func fix(_ location: Location) -> LocationStatus? {
        // Every fix: one of the same kind as the last changes nothing, unless it ends a silence.
        if silence == nil, case .fix(let fix, let status) = base, fix == location.fix, status == location.status {
            return nil
        }
        return set(.fix(location.fix, location.status))
    }

    /// A receiver is there: waiting for a fix, unless fixes are already coming.
    private mutating func waitingUnlessFixing() -> LocationStatus? {
        switch base {
        case .fix, .fixLost, .waitingForFix: reportArrived()
        default: set(.waitingForFix(satellites: satellites))
        }
    }
}

import GPSDCore

/// What a live timeline makes of its subscription's events, in order: a ``LocationUpdate`` for each fix, change of
/// status and rejection. A value: the stream's outlet keeps one, and tests feed it events.
struct LiveTimeline {
    private var location: Location?
    private var status = LocationStatus.stopped
    private var rejection: FixRejection?
    private var stationary = StationaryDetector()
    /// Whether a session of this timeline has connected before, and whether one is connecting now.
    private var connectedBefore = false
    private var connecting = false

    /// The update `event` makes, or `nil` for the end (the outlet finishes the sequence).
    mutating func update(for event: SubscriptionEvent) -> LocationUpdate? {
        var restarted = false
        switch event {
        case .location(let fix):
            location = fix
            rejection = nil
            _ = stationary.update(with: fix)
            return make(isNewFix: true, restarted: false)
        case .rejected(let new):
            rejection = new
        case .status(let new):
            switch new {
            case .connecting:
                connecting = true
                stationary.reset()
            case .connected where connecting:
                restarted = connectedBefore
                (connectedBefore, connecting) = (true, false)
            case .fixLost, .deviceGone, .noDevice, .reconnecting, .stopped:
                stationary.reset()   // whatever made fixes stop makes rest unknown: the next fixes judge it afresh
            default:
                break
            }
            status = new
        case .ended:
            return nil
        }
        return make(isNewFix: false, restarted: restarted)
    }

    private func make(isNewFix: Bool, restarted: Bool) -> LocationUpdate {
        let unavailable = if case .fix = status { false } else { true }
        return LocationUpdate(
            location: location, isNewFix: isNewFix, status: status, locationUnavailable: unavailable,
            isStale: location != nil && (unavailable || rejection != nil), isStationary: stationary.isStationary,
            sourceRestarted: restarted, rejection: rejection)
    }
}

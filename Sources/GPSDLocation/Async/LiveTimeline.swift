import GPSDCore
import GPSDSystem

/// What a live timeline makes of its subscription's events, in order: a ``LocationUpdate`` for each fix, change of
/// status and rejection. A value: the stream's outlet keeps one, and tests feed it events.
struct LiveTimeline {
    private var location: Location?
    /// Whether ``location`` came since fixes last stopped coming (or the source restarted).
    private var isCurrent = false
    private var status = LocationStatus.stopped
    private var rejection: FixRejection?
    private var stationary: StationaryDetector
    /// Whether a session of this timeline's source has been connected, and whether one is connecting now.
    private var connectedBefore = false
    private var connecting = false
    /// The newest heading, and whether none came for the stale timeout since.
    private var heading: Heading?
    private var headingSilent = false

    /// A timeline that judges rest by `stationary`.
    init(stationary: StationaryDetector.Configuration = StationaryDetector.Configuration()) {
        self.stationary = StationaryDetector(configuration: stationary)
    }

    /// The update `event` makes, or `nil` for the end (the outlet finishes the sequence) and for what a timeline
    /// does not follow.
    mutating func update(for event: SubscriptionEvent) -> LocationUpdate? {
        var restarted = false
        switch event {
        case .location(let fix):
            // A later report of the epoch held (gpsd's next sentence adding the altitude, say) completes it: the
            // location is updated, as the same epoch.
            let newEpoch = location.map { $0.timestamp != fix.timestamp || $0.device != fix.device } ?? true
            location = fix
            isCurrent = true
            rejection = nil
            _ = stationary.update(with: fix)
            return make(isNewFix: newEpoch, restarted: false)
        case .rejected(let new):
            rejection = new
        case .rejectionEnded:
            rejection = nil
        case .status(let new):
            switch new {
            case .connecting:
                connecting = true
            case .connected where connecting:
                restarted = connectedBefore
                (connectedBefore, connecting) = (true, false)
            case .stopped, .reconnecting:
                break
            default:
                // A timeline that subscribed mid-session learns the session is connected from any of these.
                if !connecting { connectedBefore = true }
            }
            if case .fix = new {} else { isCurrent = false }   // the fix held is from before, until the next
            switch new {
            case .fix, .stale, .connected: break
            default: stationary.reset()   // whatever made fixes stop makes rest unknown: the next fixes judge it afresh
            }
            if restarted {
                isCurrent = false
                stationary.reset()
            }
            status = new
        case .ended:
            return nil
        case .heading(let new):
            // A heading is carried by the next update; it makes one only when it changes a condition: the first
            // heading, or one that ends a silence (the silence's end comes as its own event, after it).
            let first = heading == nil
            heading = new
            // While silent, the silence's end, right after, makes the update.
            guard first, !headingSilent else { return nil }
        case .headingSilence(let silent):
            guard silent != headingSilent else { return nil }
            headingSilent = silent
            guard heading != nil else { return nil }
        }
        return make(isNewFix: false, restarted: restarted)
    }

    private func make(isNewFix: Bool, restarted: Bool) -> LocationUpdate {
        let unavailable = if case .fix = status { false } else { true }
        return LocationUpdate(
            location: location, isNewFix: isNewFix, status: status, locationUnavailable: unavailable,
            isStale: location != nil && (unavailable || rejection != nil || !isCurrent),
            isStationary: stationary.isStationary, sourceRestarted: restarted, rejection: rejection,
            heading: heading, isHeadingStale: heading != nil && (headingSilent || !status.isReporting))
    }
}

extension StreamOutlet {
    /// A live timeline: each event folded into the next ``LocationUpdate`` (``LiveTimeline``, judging rest by
    /// `stationary`), the updates of each batch sent to `channel` together; an end finishes it.
    static func timeline(
        _ channel: UpdateChannel<LocationUpdate, any Error>, stationary: StationaryDetector.Configuration
    ) -> StreamOutlet {
        // One thread passes a stream's events at a time; the lock only makes that visible to the compiler.
        let timeline = Locked(LiveTimeline(stationary: stationary))
        return StreamOutlet(
            pass: { notices in
                // Folded under the channel's lock, in order; the consumer is resumed after both locks.
                channel.send(notices, end: notices.last?.event.end) { notice in
                    if case .ended = notice.event { return nil }
                    return timeline.withLock { $0.update(for: notice.event) }
                }
            },
            finish: { channel.finish() })
    }
}

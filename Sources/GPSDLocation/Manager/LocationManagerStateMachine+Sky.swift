import FoundationEssentials
import GPSDCore

// The satellites: an epoch's SKYs made one view (``SkyEpochs``), told to observers (`satelliteUpdates()`), the
// delegate and the status; cleared when the receiver goes or loses its fix.
extension LocationManagerStateMachine {
    /// A SKY report: the whole views it completes, told.
    mutating func skyReported(_ view: SkyView, listed: Bool, into decision: inout Decision) {
        let result = epochs.sky(view, listed: listed)
        if let ended = result.ended { tell(sky: ended, into: &decision) }
        if let complete = result.complete { tell(sky: complete, into: &decision) }
        if result.ended == nil, result.complete == nil { announce(status.reportArrived(), into: &decision) }
    }

    /// A TPV live from a receiver, at `time` if it has one, with a fix or not: the sky epoch it ends is told, and
    /// a receiver that lost its fix has its satellites cleared.
    mutating func receiverReported(device: String?, time: Date?, isFix: Bool, into decision: inout Decision) {
        let result = epochs.skyEpoch(device: device, time: time, isFix: isFix)
        if let ended = result.ended { tell(sky: ended, into: &decision) }
        if result.fixLost { clearSatellites(of: device, into: &decision) }
    }

    /// The receiver at `device` lost its fix (`nil`: every receiver): ``LocationManager/sky`` becomes `nil`, and,
    /// if any of its satellites were known, observers and the delegate are told an empty view of it (no
    /// satellites, no time, counts 0).
    mutating func clearSatellites(of device: String?, into decision: inout Decision) {
        guard epochs.forgetSatellites(of: device) else { return }
        tellEmptySky(of: device, into: &decision)
    }

    /// The receiver at `device` went (`nil`: every receiver): its satellites are cleared as for a lost fix, and
    /// its sky epochs start afresh when it is back: its first view waits for an epoch seen whole, and none is
    /// stamped with the time of a fix from before it went (``SkyEpochs``).
    mutating func receiverWent(_ device: String?, into decision: inout Decision) {
        guard epochs.receiverGone(device) else { return }
        tellEmptySky(of: device, into: &decision)
    }

    private mutating func tellEmptySky(of device: String?, into decision: inout Decision) {
        let empty = SkyView(satellites: [], device: device)
        observe(.satellites(empty), into: &decision)
        if subscriptions.delegateSubscribed { decision.call(.satellites(empty), generation: subscriptions.generation) }
    }

    /// A recording ended: the sky epochs under way are whole, and told.
    mutating func finishSkyEpochs(into decision: inout Decision) {
        for view in epochs.finishSkyEpochs() { tell(sky: view, into: &decision) }
    }

    /// A receiver epoch's whole view: to observers, the delegate if it holds a subscription, and the status.
    private mutating func tell(sky view: SkyView, into decision: inout Decision) {
        observe(.satellites(view), into: &decision)
        if subscriptions.delegateSubscribed { decision.call(.satellites(view), generation: subscriptions.generation) }
        announce(status.sky(view.count), into: &decision)
    }
}

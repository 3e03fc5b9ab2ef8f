import FoundationEssentials
import GPSDCore

/// One whole ``SkyView`` per receiver epoch, from gpsd's SKY reports, which come in pieces: gpsd 3.22 and 3.25
/// send one after each system's GSV set of an NMEA receiver, each listing the satellites of that epoch so far
/// (16, then 21, then 26 of a four-system receiver), and 3.25 sends more without a list (after the GGA and each
/// GSA, with their DOPs). Receivers are kept apart, by device.
///
/// **The epoch of a SKY.** The epoch of its own time, if it has one; otherwise that of the receiver's newest
/// fix (a TPV, with or without a fix), since gpsd reports a cycle's SKYs after its TPVs. A receiver that sends
/// no time at all: an epoch is a run of SKYs in which each list extends the one before it (the same satellites
/// and more), with the SKYs without a list between them.
///
/// **Its view.** The epoch's last list, with the newest of each dilution factor its SKYs gave; a factor none
/// gave, and the list if none came (a receiver that sends its GSV sets less often than its fixes), are kept
/// from the epoch before. Stamped with the epoch's time (`nil` for a receiver without one).
///
/// **When it is passed on.** Once its epoch is known complete: at the SKY that brings as many SKYs as each of the
/// receiver's last two epochs brought, when they brought alike (as ``EpochEnds`` learns the reports of a fix's
/// epoch), so in gpsd's steady stream at the epoch's last SKY; otherwise when the next epoch begins (its first
/// fix or SKY). So a receiver that sends one SKY an epoch has its view passed on at that SKY from its third
/// epoch on, the first two when the epoch after begins. A SKY that comes after its epoch was passed on (an
/// epoch that brought more than the two before) passes the epoch's view on again at once, completed, and the
/// count is learned again.
///
/// **Seen whole.** A receiver's epochs count from the first one whose start was seen: its first TPV of the session,
/// or a SKY that begins a new epoch. The SKYs before (a session that joined gpsd mid-cycle; a receiver gpsd opened
/// mid-cycle, just added or after gpsd started, whose first SKYs lack the systems it reported before) make an epoch
/// of unknown time and perhaps partial, which is never passed on. A new session, and a receiver that went, start so
/// again, with nothing kept: not the time of a fix from before (no view is stamped with it), nor the counts learned
/// (gpsd learns the receiver's cycle afresh, and its first cycle brings a SKY more than the next ones).
///
/// **Cleared** when the receiver goes or loses its fix (``gone(device:)``, ``clear(device:)``): its epoch under
/// way is dropped and its view forgotten.
struct SkyEpochs {
    private struct Epoch {
        /// The epoch's time: its SKYs', or the receiver's fix's; `nil` for a receiver without a time.
        var time: Date?
        var view: SkyView
        /// Whether one of its SKYs had a list.
        var listed: Bool
        /// How many SKYs it brought.
        var skies = 1
        /// Whether its view was passed on.
        var passed = false
        /// Whether it began before the receiver's first epoch seen from its start: never passed on.
        var joined = false
    }

    private struct Receiver {
        /// The time of its newest TPV: the epoch its SKYs without a time belong to.
        var fixTime: Date?
        /// The epoch under way.
        var epoch: Epoch?
        /// Whether its newest TPV had a fix.
        var fixing = false
        /// The view of the epoch before: what a SKY without a list keeps.
        var last: SkyView?
        /// The SKYs the last two epochs brought, the older first.
        var previous: (Int?, Int?) = (nil, nil)
        /// Whether the start of one of its epochs was seen: a TPV of it came, or a SKY began a new epoch.
        var startSeen = false

        var learned: Int? {
            guard let last = previous.1, previous.0 == last else { return nil }
            return last
        }

        /// The epoch under way ends: its count is learned from, and its view kept, unless it was joined.
        mutating func endEpoch() -> Epoch? {
            guard let ended = epoch else { return nil }
            if !ended.joined {
                previous = (previous.1, ended.skies)
                last = ended.view
            }
            epoch = nil
            return ended
        }

        /// The view of the epoch under way, ended: `nil` if it was passed on already, or joined.
        mutating func endEpochToPass() -> SkyView? {
            guard let ended = endEpoch(), !ended.passed, !ended.joined else { return nil }
            return ended.view
        }
    }

    private var receivers: [String: Receiver] = [:]
    /// The newest view passed on, of whichever receiver: ``LocationManager/sky``.
    private(set) var newest: SkyView?

    /// What a SKY caused: the view of the epoch it ended (the epoch before, not passed on yet), and its own
    /// epoch's view, if that is complete now. Either may be `nil`; `ended` comes first.
    struct OnSky: Equatable {
        var ended: SkyView?
        var complete: SkyView?
    }

    /// A SKY report of a receiver; `listed` says whether it had a satellite list (gpsd 3.25's after a GGA or a
    /// GSA has none).
    mutating func sky(_ report: SkyView, listed: Bool) -> OnSky {
        let key = report.device ?? ""
        var receiver = receivers[key] ?? Self.newReceiver(making: &receivers)
        let time = report.timestamp ?? receiver.fixTime
        var result = OnSky()
        if let epoch = receiver.epoch {
            if Self.continues(epoch, time: time, report: report, listed: listed) {
                receiver.epoch = Self.merged(epoch, report, listed: listed)
                receiver.epoch!.skies += 1
                // More than the epoch was thought to bring: its completed view again.
                if epoch.passed { result.complete = receiver.epoch!.view }
            } else {
                result.ended = receiver.endEpochToPass()
                receiver.startSeen = true   // this SKY begins an epoch
            }
        }
        if receiver.epoch == nil {
            let carried = receiver.last
            var view = report
            view.timestamp = time
            if !listed, let carried, !carried.satellites.isEmpty {
                view.satellites = carried.satellites
                view.visible = carried.visible
                view.used = carried.used
                view.isTruncated = carried.isTruncated
            }
            if let carried { view.dilution = view.dilution.filled(from: carried.dilution) }
            receiver.epoch = Epoch(time: time, view: view, listed: listed, joined: !receiver.startSeen)
        }
        if var epoch = receiver.epoch, !epoch.passed, !epoch.joined, epoch.skies == receiver.learned {
            epoch.passed = true
            receiver.epoch = epoch
            result.complete = epoch.view
        }
        receivers[key] = receiver
        if let view = result.complete ?? result.ended { newest = view }
        return result
    }

    /// What a TPV caused: the view of the sky epoch it ended, not passed on before, and whether it says the
    /// receiver lost its fix (no fix after a fix), which clears its satellites (``clear(device:)``).
    struct OnFix: Equatable {
        var ended: SkyView?
        var fixLost = false
    }

    /// A TPV live from `device`'s receiver, at `time` if it has one, with a fix (`isFix`) or without.
    mutating func fix(device: String?, time: Date?, isFix: Bool) -> OnFix {
        let key = device ?? ""
        var receiver = receivers[key] ?? Self.newReceiver(making: &receivers)
        var result = OnFix(fixLost: receiver.fixing && !isFix)
        receiver.fixing = isFix
        if let time {
            receiver.fixTime = time
            if let epoch = receiver.epoch, epoch.time != time { result.ended = receiver.endEpochToPass() }
        }
        receiver.startSeen = true   // the SKYs after it are of its epoch, seen from its start
        receivers[key] = receiver
        if let ended = result.ended { newest = ended }
        return result
    }

    /// A recording ended: the views of the epochs under way, not passed on yet, since no more of them will come.
    mutating func finish() -> [SkyView] {
        var views: [SkyView] = []
        for key in receivers.keys {
            if let view = receivers[key]?.endEpochToPass() { views.append(view) }
        }
        if let last = views.last { newest = last }
        return views
    }

    /// The receiver at `device` went, or lost its fix (`nil`: every receiver, as when gpsd has none): its epoch
    /// under way is dropped and its view forgotten. Returns whether a view of it was known (passed on or under
    /// way), so that its clearing is worth telling.
    mutating func clear(device: String?) -> Bool {
        var known = false
        if let device {
            known = receivers[device]?.epoch != nil || newest?.device == device
            receivers[device]?.epoch = nil
            receivers[device]?.last = nil
            if newest?.device == device { newest = nil }
        } else {
            known = newest != nil || receivers.values.contains { $0.epoch != nil }
            for key in receivers.keys {
                receivers[key]?.epoch = nil
                receivers[key]?.last = nil
            }
            newest = nil
        }
        return known
    }

    /// The receiver at `device` went (`nil`: every receiver, as when gpsd has none): as ``clear(device:)``, and
    /// nothing learned of it is kept, since gpsd opens it afresh when it comes back. Returns whether a view of it
    /// was known.
    mutating func gone(device: String?) -> Bool {
        let known = clear(device: device)
        if let device { receivers[device] = nil } else { receivers.removeAll() }
        return known
    }

    /// The session ended: nothing is kept of any receiver. The next session may join gpsd mid-cycle, and a new
    /// gpsd learns the receivers' cycles afresh.
    mutating func sessionEnded() {
        reset()
    }

    /// A fresh start: nothing is kept.
    mutating func reset() {
        receivers.removeAll()
        newest = nil
    }

    /// A receiver's record, room made for it among at most ``EpochAssembly/maximumReceivers``.
    private static func newReceiver(making receivers: inout [String: Receiver]) -> Receiver {
        if receivers.count >= EpochAssembly.maximumReceivers { receivers.remove(at: receivers.startIndex) }
        return Receiver()
    }

    /// Whether a SKY at `time` belongs to the epoch under way: by time where either has one; without, if its list
    /// extends the epoch's (or the epoch has none yet), or, without a list, if the epoch was not passed on.
    private static func continues(_ epoch: Epoch, time: Date?, report: SkyView, listed: Bool) -> Bool {
        if epoch.time != nil || time != nil { return epoch.time == time }
        guard listed else { return !epoch.passed }
        guard epoch.listed else { return true }
        let held = epoch.view.satellites
        return report.satellites.count > held.count && report.satellites.starts(with: held)
    }

    /// The epoch with one more SKY of it: a list replaces the list, and each factor given replaces its own.
    private static func merged(_ epoch: Epoch, _ report: SkyView, listed: Bool) -> Epoch {
        var epoch = epoch
        var view = epoch.view
        if listed || view.satellites.isEmpty {
            view.satellites = report.satellites
            view.visible = report.visible
            view.used = report.used
            view.isTruncated = report.isTruncated
        }
        view.dilution = report.dilution.filled(from: view.dilution)
        epoch.view = view
        epoch.listed = epoch.listed || listed
        return epoch
    }
}

extension DilutionOfPrecision {
    /// These factors, each one missing taken from `older`.
    func filled(from older: DilutionOfPrecision) -> DilutionOfPrecision {
        DilutionOfPrecision(
            horizontal: horizontal ?? older.horizontal, vertical: vertical ?? older.vertical,
            position: position ?? older.position, time: time ?? older.time, geometric: geometric ?? older.geometric,
            longitude: longitude ?? older.longitude, latitude: latitude ?? older.latitude)
    }
}

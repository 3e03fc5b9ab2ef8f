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
/// **Cleared** when the receiver goes or loses its fix (``clear(device:)``): its epoch under way is dropped and
/// its view forgotten.
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

        var learned: Int? {
            guard let last = previous.1, previous.0 == last else { return nil }
            return last
        }

        /// The epoch under way ends: its count is learned from.
        mutating func endEpoch() -> Epoch? {
            guard let ended = epoch else { return nil }
            previous = (previous.1, ended.skies)
            last = ended.view
            epoch = nil
            return ended
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
                if let ended = receiver.endEpoch(), !ended.passed { result.ended = ended.view }
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
            receiver.epoch = Epoch(time: time, view: view, listed: listed)
        }
        if var epoch = receiver.epoch, !epoch.passed, epoch.skies == receiver.learned {
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
            if let epoch = receiver.epoch, epoch.time != time, let over = receiver.endEpoch(), !over.passed {
                result.ended = over.view
            }
        }
        receivers[key] = receiver
        if let ended = result.ended { newest = ended }
        return result
    }

    /// A recording ended: the views of the epochs under way, not passed on yet, since no more of them will come.
    mutating func finish() -> [SkyView] {
        var views: [SkyView] = []
        for key in receivers.keys {
            if let over = receivers[key]?.endEpoch(), !over.passed { views.append(over.view) }
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

    /// The session ended: the epochs under way and the views are dropped, with the times they were judged by; the
    /// counts learned stay, as the receivers' habits.
    mutating func sessionEnded() {
        for key in receivers.keys {
            receivers[key]?.epoch = nil
            receivers[key]?.fixTime = nil
            receivers[key]?.fixing = false
            receivers[key]?.last = nil
        }
        newest = nil
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

import FoundationEssentials
import GPSDCore

/// When a receiver's epoch is over, known from the order of its reports rather than by waiting for the next
/// epoch: gpsd sends each receiver's cycle as the same run of reports every time (a TPV for each sentence that
/// changes the fix, the epoch's GST), so once the last two epochs of a receiver brought the same number of
/// reports, the epoch that reaches that number is complete. gpsd's own NMEA driver learns its receiver's
/// cycle the same way, by the sentence that ends it. A receiver whose epochs differ (a sentence now and then)
/// is not judged: its epoch is over when the next begins, as before. Receivers are kept apart, by device.
struct EpochEnds {
    private struct Receiver {
        /// The epoch under way: its time, and how many reports of it came.
        var time: Date
        var reports = 1
        /// How many reports the last two epochs brought, the older first.
        var previous: (Int?, Int?) = (nil, nil)
        /// Whether the epoch under way was judged complete already.
        var completed = false

        /// The number of reports that completes an epoch: the last two epochs', if they were alike.
        var learned: Int? {
            guard let last = previous.1, previous.0 == last else { return nil }
            return last
        }
    }

    private var receivers: [String: Receiver] = [:]

    /// A report of `device`'s epoch at `time` (a TPV live from the receiver, or its epoch's GST): whether it
    /// completes its epoch, now. An earlier epoch's report (a receiver's time stepping back) starts over.
    mutating func report(device: String?, time: Date) -> Bool {
        let key = device ?? ""
        guard var receiver = receivers[key] else {
            if receivers.count >= EpochAssembly.maximumReceivers { receivers.remove(at: receivers.startIndex) }
            receivers[key] = Receiver(time: time)
            return false
        }
        if time == receiver.time {
            receiver.reports += 1
        } else if time > receiver.time {
            receiver = Receiver(time: time, previous: (receiver.previous.1, receiver.reports))
        } else {
            receiver = Receiver(time: time)
        }
        let completes = !receiver.completed && receiver.reports == receiver.learned
        if completes { receiver.completed = true }
        receivers[key] = receiver
        return completes
    }

    /// A fresh start: nothing learned is kept.
    mutating func reset() { receivers.removeAll() }

    /// `device`'s receiver is gone: what was learned of it goes too.
    mutating func forget(_ device: String) { receivers[device] = nil }
}

import Foundation
import GPSDLocation

/// The epoch each receiver is in, held until it is over, so the log has each epoch's most complete record once.
/// A timeline passes on the records of an epoch as they come (gpsd's RMC, then its GGA adds the altitude, a GST
/// the receiver's statistics), each more complete than the last. An epoch is over when its receiver's next one
/// arrives, when fixes stop (the fix lost, the receiver gone, gpsd silent or away), or when the timeline ends.
struct OpenEpochs {
    /// Receivers kept apart at most, as the library's own epoch assembly keeps them: a peer that names a new one
    /// in every report would otherwise grow what is held without end.
    static let maximumReceivers = 64

    /// The newest record of each receiver's open epoch, by device.
    private var open: [String: Location] = [:]
    /// The time of each receiver's last epoch written, by device: a late record of it is not written again.
    private var written: [String: Date] = [:]

    /// Takes a record; returns the epochs it ends (the receiver's previous one, or all, to make room).
    mutating func add(_ fix: Location) -> [Location] {
        let key = fix.device ?? ""
        if fix.timestamp == written[key] { return [] }
        var over: [Location] = []
        if open[key] == nil, open.count >= Self.maximumReceivers { over = closeAll() }
        if let previous = open[key], previous.timestamp != fix.timestamp {
            over.append(previous)
            remember(previous)
        }
        open[key] = fix
        return over
    }

    /// Every open epoch, now over, in the order of the receivers' names.
    mutating func closeAll() -> [Location] {
        let over = open.sorted { $0.key < $1.key }.map(\.value)
        open.removeAll()
        for fix in over { remember(fix) }
        return over
    }

    private mutating func remember(_ fix: Location) {
        if written[fix.device ?? ""] == nil, written.count >= Self.maximumReceivers { written.removeAll() }
        written[fix.device ?? ""] = fix.timestamp
    }
}

public import FleetCore
public import Foundation

/// One fix waiting in a ``FixQueue``: its sequence number and its payload, ready to publish.
public struct QueuedFix: Sendable, Equatable {
    /// The fix's number on its vehicle (``FleetMessage/seq``).
    public let seq: Int64
    /// The message as it goes on the wire (``FleetMessage/payload()``).
    public let payload: [UInt8]

    public init(seq: Int64, payload: [UInt8]) {
        self.seq = seq
        self.payload = payload
    }
}

/// A ``FixQueue``'s health, read from memory at no cost.
public struct FixQueueStatistics: Sendable, Equatable {
    /// Fixes in the queue.
    public var depth: Int
    /// Fixes dropped for the cap, ever (kept in the queue's file).
    public var dropped: Int64
    /// The newest sequence number given (0: none yet).
    public var lastSeq: Int64
    /// When the oldest fix still queued was appended (wall clock), nil when the queue is empty.
    public var oldestQueuedAt: Date?

    public init(depth: Int = 0, dropped: Int64 = 0, lastSeq: Int64 = 0, oldestQueuedAt: Date? = nil) {
        self.depth = depth
        self.dropped = dropped
        self.lastSeq = lastSeq
        self.oldestQueuedAt = oldestQueuedAt
    }
}

/// What a ``FixQueue`` refuses, or what failed under it.
public enum FixQueueError: Error, Sendable, Equatable, CustomStringConvertible {
    /// SQLite failed (a full disk, a file that is not a queue, …): its message.
    case database(String)
    /// The queue's file belongs to another vehicle: its name. Each vehicle keeps a queue of its own.
    case otherVehicle(found: String)
    /// A fix that cannot be sent (``FleetError/unsendableFix(_:)``); nothing was appended.
    case unsendable(FleetError)
    /// A capacity under one fix.
    case invalidCapacity
    /// Another ``FixQueue`` (in this process or another, a second uplink) has the queue's file open: its path.
    case inUse(String)

    public var description: String {
        switch self {
        case .database(let message): "the fix queue failed: \(message)"
        case .otherVehicle(let found): "the fix queue belongs to another vehicle: \(found)"
        case .unsendable(let error): "\(error)"
        case .invalidCapacity: "the fix queue's capacity must be at least 1 fix"
        case .inUse(let path): "the fix queue \(path) is open elsewhere (another fleet-uplink?)"
        }
    }
}

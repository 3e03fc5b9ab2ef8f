/// The identity of a vehicle's queue: 16 lowercase hexadecimal digits, drawn at random when the queue's file is made.
///
/// A fix's dedupe key is its vehicle, its queue and its sequence number. A queue made again (its file lost with an
/// SD card, or removed when it was damaged) starts again at sequence number 1 with a new identity, so its fixes are
/// never taken for a replay of the old queue's; and two uplinks that run as one vehicle by mistake (each with its
/// own queue) are told apart rather than overwriting each other.
///
/// ```swift
/// let id = QueueID.random()
/// print(id)                                   // 3f9a1c2e5b7d4e60
/// let same = try QueueID("3f9a1c2e5b7d4e60")
/// ```
public struct QueueID: Sendable, Hashable, CustomStringConvertible {
    /// The 16 digits.
    public let rawValue: String

    /// The identity written as `text`, or ``FleetError/invalidQueue(_:)`` if it is not 16 lowercase hex digits.
    public init(_ text: some StringProtocol) throws(FleetError) {
        let bytes = text.utf8
        guard bytes.count == 16, bytes.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
            throw .invalidQueue(String(text.prefix(32)))
        }
        rawValue = String(text)
    }

    /// A new identity, from the system's random numbers.
    public static func random() -> QueueID {
        var generator = SystemRandomNumberGenerator()
        return random(using: &generator)
    }

    /// A new identity from `generator`.
    public static func random(using generator: inout some RandomNumberGenerator) -> QueueID {
        let digits = String(UInt64.random(in: .min ... .max, using: &generator), radix: 16)
        return QueueID(checked: String(repeating: "0", count: 16 - digits.count) + digits)
    }

    /// 16 lowercase hex digits, as made above.
    private init(checked rawValue: String) { self.rawValue = rawValue }

    public var description: String { rawValue }
}

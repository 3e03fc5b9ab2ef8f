/// How fast a recording is replayed.
public enum ReplayPace: Sendable, Hashable {
    /// At the pace the fixes were recorded, from their timestamps.
    case realTime
    /// `factor` times faster than recorded (2 = twice as fast).
    case accelerated(by: Double)
    /// Every report at once, as fast as they can be parsed.
    case asFastAsPossible

    /// Recorded seconds per real second; `nil` for as fast as possible.
    var speed: Double? {
        switch self {
        case .realTime: 1
        case .accelerated(let factor): factor > 0 && factor.isFinite ? factor : nil
        case .asFastAsPossible: nil
        }
    }
}

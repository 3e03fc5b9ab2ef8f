package import GPSDLocation

extension LocationStatus {
    /// The case, without its values: for comparing sequences of statuses whose values (delays, satellite
    /// counts) vary.
    package var caseName: String {
        switch self {
        case .connecting: "connecting"
        case .connected: "connected"
        case .noDevice: "noDevice"
        case .waitingForFix: "waitingForFix"
        case .fix: "fix"
        case .fixLost: "fixLost"
        case .deviceGone: "deviceGone"
        case .stale: "stale"
        case .reconnecting: "reconnecting"
        case .stopped: "stopped"
        }
    }
}

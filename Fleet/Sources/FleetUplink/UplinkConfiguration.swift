public import FleetCore
import GPSDSystem

/// How an ``Uplink`` reaches its broker and paces what it sends.
///
/// ```swift
/// var configuration = UplinkConfiguration(vehicle: try VehicleID("robot-7"),
///                                         broker: try BrokerAddress(parsing: "mqtts://robot-7@fleet.example.net"))
/// configuration.broker.address.password = secret
/// configuration.broker.caFile = "/etc/fleet/ca.pem"
/// ```
public struct UplinkConfiguration: Sendable {
    /// The vehicle whose fixes these are: its topics, and the first part of each fix's dedupe key.
    public var vehicle: VehicleID
    /// The broker: its address and login, the CAs, the keepalive, when to try again.
    public var broker: BrokerConfiguration
    /// The MQTT client id; nil (the default): `fleet-uplink-<vehicle>-<queue>`, the queue's identity in it, so that
    /// two uplinks run as one vehicle by mistake do not keep taking each other's connection (each with its own queue,
    /// both are stored, and the ingest warns of them).
    public var clientID: String?
    /// Fixes published and not yet acknowledged, at most: the backlog's window. The newest fix on the state topic
    /// and the status message come on top. At most 65532 are used (libmosquitto's message ids).
    public var maximumInFlight: Int = 256
    /// Fixes read from the queue at a time while draining a backlog.
    public var batchSize: Int = 512
    /// The seed of the reconnection delays' jitter: the same seed, the same delays (for tests); nil: a random one.
    public var jitterSeed: UInt64?

    public init(vehicle: VehicleID, broker: BrokerConfiguration) {
        self.vehicle = vehicle
        self.broker = broker
    }

    /// A configuration for `broker`, with its defaults.
    public init(vehicle: VehicleID, broker address: BrokerAddress) {
        self.init(vehicle: vehicle, broker: BrokerConfiguration(address: address))
    }

    /// The client id for a queue whose identity is `queue`.
    func clientID(queue: QueueID?) -> String {
        clientID ?? "fleet-uplink-\(vehicle.rawValue)" + (queue.map { "-\($0.rawValue)" } ?? "")
    }
}

/// Where an ``Uplink``'s connection to its broker stands.
public enum UplinkState: Sendable, Equatable, CustomStringConvertible {
    /// Connecting: attempt `attempt` (1 after a start or a good connection).
    case connecting(attempt: Int)
    /// The broker accepted the connection; fixes flow.
    case online
    /// The broker refused the connection: a wrong user name or password, or not authorised. Retried with backoff.
    case refused(String)
    /// The connection could not be made, or was lost. Retried with backoff.
    case disconnected(String)
    /// Waiting before the next attempt.
    case waiting(Duration)
    /// ``Uplink/stop()`` was called.
    case stopped

    public var description: String {
        switch self {
        case .connecting(let attempt): attempt == 1 ? "connecting" : "connecting (attempt \(attempt))"
        case .online: "online"
        case .refused(let reason): "refused: \(reason)"
        case .disconnected(let reason): "disconnected: \(reason)"
        case .waiting(let delay): "retrying in \(delay.secondsText)"
        case .stopped: "stopped"
        }
    }
}

/// What an ``Uplink`` has done, for health checks and tests.
public struct UplinkStatistics: Sendable, Equatable {
    /// The queue's depth, drops and oldest fix.
    public var queue: FixQueueStatistics
    /// Fixes the broker acknowledged since the uplink started.
    public var acknowledged: Int64
    /// Connections the broker accepted since the uplink started.
    public var connections: Int
    /// Connections the broker refused since the uplink started.
    public var refusals: Int
    /// Fixes published and not yet acknowledged now.
    public var inFlight: Int
    /// Fixes given and held in memory because the queue could not be written (a full disk), to be written.
    public var held: Int = 0
    /// Writes of the queue that failed since the uplink started.
    public var queueWriteFailures: Int64 = 0
    /// Fixes that were held in memory and lost: beyond ``Uplink``'s bound, or at the stop with the queue still failing.
    public var lost: Int64 = 0
}

/// Why an uplink could not start.
public enum UplinkError: Error, Sendable, CustomStringConvertible {
    /// A system call failed.
    case system(String, Int32)

    public var description: String {
        switch self {
        case .system(let call, let code): "\(call) failed: \(SystemError(function: call, number: code).text)"
        }
    }
}

public import FleetCore

/// How an ``Ingest`` reaches its broker and batches its writes.
///
/// ```swift
/// var configuration = IngestConfiguration(broker: try BrokerAddress(parsing: "mqtt://ingest@127.0.0.1"))
/// configuration.broker.address.password = try readSecret(fromFile: "/etc/fleet-ingest/password")
/// ```
public struct IngestConfiguration: Sendable {
    /// The broker: its address and login, the CAs, the keepalive, and when to try again after it or the database
    /// failed (0.5 s doubling to 30 s, ±50 %, for ever). The broker's delay starts over only once a connection
    /// proves good: a fix it brought is committed, or it held for ``provenAfter``. A broker that accepts the
    /// subscription and then drops the connection at once is retried ever more slowly.
    public var broker: BrokerConfiguration
    /// The MQTT client id: the broker keeps this client's session (its subscription and every message not yet
    /// acknowledged) while it is away, under this name. Two ingests must not share one.
    public var clientID = "fleet-ingest"
    /// What it subscribes to.
    public var topicFilter = FleetTopic.allFixes
    /// Rows written in one statement, at most.
    public var batchSize = 1000
    /// How long a connection must hold to prove good when it brings no fix (an idle fleet).
    public var provenAfter: Duration = .seconds(10)
    /// How long an insert may wait for the database before the wait is told (once, with the fixes held).
    public var databaseSilence: Duration = .seconds(5)

    public init(broker: BrokerConfiguration) {
        self.broker = broker
    }

    /// A configuration for `broker`, with its defaults.
    public init(broker address: BrokerAddress) {
        self.init(broker: BrokerConfiguration(address: address))
    }
}

/// What an ``Ingest`` has done.
public struct IngestStatistics: Sendable, Equatable {
    /// Messages received (again after a redelivery).
    public var received: Int64 = 0
    /// Rows written.
    public var stored: Int64 = 0
    /// Fixes already stored (sent again after a lost acknowledgement or a restart), not written twice.
    public var duplicates: Int64 = 0
    /// Messages refused, by ``FleetRejection/reason`` (and `malformed_publish` for a PUBLISH that cannot be read).
    public var rejected: [String: Int64] = [:]
    /// Connections the broker accepted.
    public var connections = 0
    /// Times fixes of one vehicle came from two queues at once: two uplinks running as that vehicle.
    public var concurrentQueues: Int64 = 0
    /// Times the database failed or kept an insert waiting past ``IngestConfiguration/databaseSilence``.
    public var databaseOutages: Int64 = 0
}

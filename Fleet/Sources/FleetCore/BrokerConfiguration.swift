public import GPSDLocation

/// How a fleet program reaches its broker: what `fleet-uplink` and `fleet-ingest` share (``BrokerAddress`` with
/// its login, the CAs to verify TLS by, the keepalive, when to try again).
///
/// ```swift
/// var broker = BrokerConfiguration(address: try BrokerAddress(parsing: "mqtts://robot-7@fleet.example.net"))
/// broker.address.password = try readSecret(fromFile: "/etc/fleet-uplink/password")
/// broker.caFile = "/etc/fleet-uplink/ca.pem"
/// ```
public struct BrokerConfiguration: Sendable {
    /// The broker, with the user name and password to log in with.
    public var address: BrokerAddress
    /// The certificate authorities to verify a TLS broker by (PEM); nil: the system's
    /// (`/etc/ssl/certs/ca-certificates.crt`). Given for an `mqtt://` broker, it turns TLS on.
    public var caFile: String?
    /// How often the connection is checked when nothing is sent (MQTT keepalive); at least a second.
    public var keepAlive: Duration = .seconds(30)
    /// When to try again after a connection failed, was refused or was lost: by default 0.5 s doubling to 30 s,
    /// each varied by ±50 %, for ever.
    public var reconnectPolicy = ReconnectPolicy(initialDelay: .milliseconds(500), maximumDelay: .seconds(30), jitter: 0.5)

    public init(address: BrokerAddress) {
        self.address = address
    }

    /// The CA file to verify the broker by, or nil for a plain TCP connection.
    public var tlsCAFile: String? {
        if let caFile { return caFile }
        return address.usesTLS ? "/etc/ssl/certs/ca-certificates.crt" : nil
    }
}

public import ArgumentParser
public import FleetCore

/// The broker's options, which `fleet-uplink` and `fleet-ingest` take alike (an `@OptionGroup` of both), and the
/// configuration they make: the address, with the password read from its file, and the CAs.
///
/// ```swift
/// @OptionGroup var broker: BrokerOptions
/// let configuration = try broker.configuration()
/// ```
public struct BrokerOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The broker: mqtt://[user[:password]@]host[:port] or mqtts://…", valueName: "url"))
    public var broker: String?

    @Option(help: ArgumentHelp("Verify the broker's TLS certificate by these CAs (PEM); turns TLS on", valueName: "file"))
    public var tlsCa: String?

    @Option(help: ArgumentHelp("Read the broker password from this file's first line (not the command line)",
                               valueName: "file"))
    public var passwordFile: String?

    public init() {}

    public func validate() throws {
        guard let broker else {
            if passwordFile != nil || tlsCa != nil { throw ValidationError("--password-file and --tls-ca go with --broker") }
            return
        }
        let address: BrokerAddress
        do { address = try BrokerAddress(parsing: broker) } catch { throw ValidationError(error.description) }
        if passwordFile != nil, address.username == nil {
            throw ValidationError("--password-file needs a user name in --broker")
        }
    }

    /// The broker's configuration: the address as given, its password from `--password-file` when given, the CAs.
    /// Throws a `ValidationError` when there is no `--broker`.
    public func configuration() throws -> BrokerConfiguration {
        guard let broker else { throw ValidationError("Missing expected argument '--broker <url>'") }
        var address = try BrokerAddress(parsing: broker)
        if let passwordFile { address.password = try readSecret(fromFile: passwordFile) }
        var configuration = BrokerConfiguration(address: address)
        configuration.caFile = tlsCa
        return configuration
    }
}

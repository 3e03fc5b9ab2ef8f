import ArgumentParser
import FleetCore
import FleetToolSupport
import FleetIngest
import Foundation
import Logging
import UnixSignals

#if canImport(Glibc)
import Glibc
#endif

@main
struct FleetIngestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleet-ingest",
        abstract: "Store every vehicle's fixes from an MQTT broker in PostgreSQL with PostGIS, nothing lost or doubled.",
        discussion: """
        It subscribes to fleet/+/fix at QoS 1 with a persistent session and writes each fix to the table fixes, \
        primary key (vehicle, seq), creating the PostGIS extension and the table when missing. A message is \
        acknowledged only once its row is committed, so the broker sends again whatever was not stored when \
        something failed, and the key stores it once. Messages that are not fixes, or whose values cannot be \
        true, are refused, counted and logged once per reason. SIGINT or SIGTERM stops it.

        The broker must keep the ingest's queue while it is away: in mosquitto.conf, max_queued_messages 0 (or \
        enough for the longest outage), and persistence true.

        Example:
          fleet-ingest --broker mqtt://ingest@127.0.0.1 --password-file /etc/fleet-ingest/password \\
            --database postgresql://fleet@127.0.0.1/fleet
        """
    )

    @Option(help: ArgumentHelp("The broker: mqtt://[user[:password]@]host[:port] or mqtts://…", valueName: "url"))
    var broker: String

    @Option(help: ArgumentHelp("The database: postgresql://user[:password]@host[:port]/database", valueName: "url"))
    var database: String

    @Option(help: ArgumentHelp("Verify the broker's TLS certificate by these CAs (PEM); turns TLS on", valueName: "file"))
    var tlsCa: String?

    @Option(help: ArgumentHelp("Read the broker password from this file's first line (not the command line)",
                               valueName: "file"))
    var passwordFile: String?

    @Option(help: ArgumentHelp("The MQTT client id, under which the broker keeps this ingest's session", valueName: "id"))
    var clientId: String = "fleet-ingest"

    @Option(help: ArgumentHelp("Rows written in one statement, at most", valueName: "n"))
    var batchSize: Int = 1000

    @Option(help: ArgumentHelp("Write this program's health (swift-metrics) in Prometheus's text format to this file every 5 s, for node_exporter's textfile collector",
                               valueName: "file"))
    var metricsFile: String?

    func validate() throws {
        do { _ = try BrokerAddress(parsing: broker) } catch { throw ValidationError(error.description) }
        guard database.hasPrefix("postgresql://") || database.hasPrefix("postgres://") else {
            throw ValidationError("--database must be postgresql://user[:password]@host[:port]/database")
        }
        guard (1...10_000).contains(batchSize) else { throw ValidationError("--batch-size must be 1 to 10000") }
        guard !clientId.isEmpty, clientId.utf8.count <= 65_535 else { throw ValidationError("--client-id is empty") }
    }

    func run() async throws {
        LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        let logger = { var logger = Logger(label: "fleet-ingest"); logger.logLevel = .info; return logger }()
        var address = try BrokerAddress(parsing: broker)
        if let passwordFile {
            address.password = try readSecret(fromFile: passwordFile)
            if address.username == nil { throw ValidationError("--password-file needs a user name in --broker") }
        }
        var configuration = IngestConfiguration(broker: address)
        configuration.caFile = tlsCa
        configuration.clientID = clientId
        configuration.batchSize = batchSize
        let storeLogger = { var quieter = logger; quieter.logLevel = .warning; return quieter }()
        let metrics = try metricsFile.map { try MetricsFile.bootstrap(path: $0) }
        let store = try FixStore(url: database, logger: storeLogger)
        let ingest = Ingest(configuration: configuration, store: store, logger: logger)
        logger.info("broker \(address), database \(maskingPassword(in: database))")
        let ending = await UnixSignalsSequence(trapping: .sigint, .sigterm)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await store.run() }
            group.addTask {
                do { try await ingest.run() } catch is CancellationError {} catch {
                    logger.error("\(error)")
                }
            }
            group.addTask {
                for await signal in ending {
                    logger.info("signal \(signal): stopping")
                    return
                }
            }
            if let metrics { group.addTask { await metrics.run(every: .seconds(5)) } }
            _ = await group.next()
            group.cancelAll()
        }
        try? metrics?.write()
        let statistics = ingest.statistics
        let refused = statistics.rejected.values.reduce(0, +)
        logger.info("stopped: \(statistics.stored) fixes stored, \(statistics.duplicates) duplicates, \(refused) refused")
    }
}

import ArgumentParser
import FleetCore
import FleetToolSupport
import FleetIngest
import Foundation
import Logging

@main
struct FleetIngestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleet-ingest",
        abstract: "Store every vehicle's fixes from an MQTT broker in PostgreSQL with PostGIS, nothing lost or doubled.",
        discussion: """
        It subscribes to fleet/+/fix at QoS 1 with a persistent session and writes each fix to the table fixes, \
        primary key (vehicle, queue, seq). A message is acknowledged only once its row is committed, so the broker \
        sends again whatever was not stored when something failed, and the key stores it once. Messages that are \
        not fixes, or whose values cannot be true, are refused, counted and logged once per reason. SIGINT or \
        SIGTERM stops it.

        The table is made by its owner, once: fleet-ingest --prepare, which also grants INSERT and SELECT on it to \
        the roles given with --grant-to. The ingest itself needs no more than those two rights.

        The broker must keep the ingest's queue while it is away: in mosquitto.conf, max_queued_messages 0 (or \
        enough for the longest outage), and persistence true.

        Example:
          fleet-ingest --prepare --database postgresql://postgres@127.0.0.1/fleet --grant-to fleet_ingest
          fleet-ingest --broker mqtt://ingest@127.0.0.1 --password-file /etc/fleet-ingest/password \\
            --database postgresql://fleet_ingest@127.0.0.1/fleet --database-password-file /etc/fleet-ingest/db
        """
    )

    @OptionGroup var broker: BrokerOptions

    @Option(help: ArgumentHelp("The database: postgresql://user[:password]@host[:port]/database", valueName: "url"))
    var database: String

    @Option(help: ArgumentHelp("Read the database password from this file's first line (not the command line)",
                               valueName: "file"))
    var databasePasswordFile: String?

    @Flag(help: "Make the table (as its owner), grant it to the --grant-to roles, and exit")
    var prepare = false

    @Option(help: ArgumentHelp("With --prepare: a role the ingest runs as, granted INSERT and SELECT", valueName: "role"))
    var grantTo: [String] = []

    @Option(help: ArgumentHelp("The MQTT client id, under which the broker keeps this ingest's session", valueName: "id"))
    var clientId: String = "fleet-ingest"

    @Option(help: ArgumentHelp("Rows written in one statement, at most", valueName: "n"))
    var batchSize: Int = 1000

    @OptionGroup var program: ProgramOptions

    func validate() throws {
        guard database.hasPrefix("postgresql://") || database.hasPrefix("postgres://") else {
            throw ValidationError("--database must be postgresql://user[:password]@host[:port]/database")
        }
        guard (1...10_000).contains(batchSize) else { throw ValidationError("--batch-size must be 1 to 10000") }
        guard !clientId.isEmpty, clientId.utf8.count <= 65_535 else { throw ValidationError("--client-id is empty") }
        guard prepare || grantTo.isEmpty else { throw ValidationError("--grant-to goes with --prepare") }
        guard prepare || broker.broker != nil else { throw ValidationError("Missing expected argument '--broker <url>'") }
    }

    func run() async throws {
        let (logger, metrics) = try program.bootstrap(label: "fleet-ingest")
        let storeLogger = { var quieter = logger; quieter.logLevel = .warning; return quieter }()
        let password = try databasePasswordFile.map { try readSecret(fromFile: $0) }
        let store = try FixStore(url: database, password: password, logger: storeLogger)
        if prepare {
            try await Self.prepare(store, grantingTo: grantTo, logger: logger)
            let grants = grantTo.isEmpty ? "" : ", granted to \(grantTo.joined(separator: ", "))"
            logger.info("prepared the table fixes in \(maskingPassword(in: database))\(grants)")
            return
        }
        var configuration = IngestConfiguration(broker: try broker.configuration())
        configuration.clientID = clientId
        configuration.batchSize = batchSize
        let ingest = Ingest(configuration: configuration, store: store, logger: logger)
        logger.info("broker \(configuration.broker.address), database \(maskingPassword(in: database))")
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await store.run() }
            group.addTask {
                do { try await ingest.run() } catch is CancellationError {} catch {
                    logger.error("\(error)")
                }
            }
            group.addTask { await untilStopSignal(logger: logger) }
            if let metrics { group.addTask { await metrics.run(every: .seconds(5)) } }
            _ = await group.next()
            group.cancelAll()
        }
        try? metrics?.write()
        let statistics = ingest.statistics
        let refused = statistics.rejected.values.reduce(0, +)
        logger.info("stopped: \(statistics.stored) fixes stored, \(statistics.duplicates) duplicates, \(refused) refused")
    }

    /// Runs ``FixStore/prepare(grantingTo:)`` with the store's pool running, then stops the pool.
    static func prepare(_ store: FixStore, grantingTo roles: [String], logger: Logger) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await store.run() }
            defer { group.cancelAll() }
            try await store.prepare(grantingTo: roles)
        }
    }
}

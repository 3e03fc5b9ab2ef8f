import GPSDSystem
import FleetCore
import Logging

// The ingest's side of the database: a batch stored whatever it takes, an outage told once.
extension Ingest {
    /// Stores `fixes`, trying again with backoff until the database takes them; meanwhile they stay unacknowledged
    /// and the connection reads no more than a batch ahead. An outage (an insert that failed, or one the database
    /// left waiting past ``IngestConfiguration/databaseSilence``) is told once, with what is held, and its end once.
    func storeRetrying(_ fixes: [FleetMessage]) async throws -> Int {
        var failures = 0
        func tell(_ reason: String) {
            guard outageBegan(at: .now) else { return }
            logger.error("""
                the database \(reason): holding \(fixes.count) fixes unacknowledged (the broker keeps the rest), \
                trying until it takes them (told once)
                """)
        }
        while true {
            do {
                let written = try await insert(fixes) {
                    tell("has not answered for \(configuration.databaseSilence.secondsText)")
                }
                if let since = outageEnded() {
                    logger.notice("the database took the \(fixes.count) fixes held, after \(since.duration(to: .now).secondsText)")
                }
                return written
            } catch {
                try Task.checkCancellation()
                tell("failed (\(String(reflecting: error)))")
                failures += 1
                try await Task.sleep(for: delay(afterFailures: failures))
            }
        }
    }

    /// One insert, calling `waiting` if it has not returned after ``IngestConfiguration/databaseSilence``.
    private func insert(_ fixes: [FleetMessage], waiting: () -> Void) async throws -> Int {
        let silence = configuration.databaseSilence
        return try await withThrowingTaskGroup(of: Int?.self) { group in
            group.addTask { try await self.store.insert(fixes) }
            group.addTask {
                try await Task.sleep(for: silence)
                return nil
            }
            while let result = try await group.next() {
                guard let written = result else {
                    waiting()
                    continue
                }
                group.cancelAll()
                return written
            }
            throw CancellationError()
        }
    }
}

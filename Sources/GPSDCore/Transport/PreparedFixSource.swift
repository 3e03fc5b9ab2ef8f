import GPSDSystem

/// Fixes handed to the manager as they are, without bytes or decoding, on a thread of its own, as fast as its
/// consumers take them: what measures the library's own part of a fix's way (the manager's decision and the async
/// bridge) apart from libgps's parsing. Each session hands on ``SourceEvent/connected``, then the fixes in batches
/// of `batchSize` (what one read of a recording would hold), waiting for its consumers as a replay does
/// (``ReplayBackpressure``), then ``SourceEvent/finished``.
package final class PreparedFixSource: LocationSource {
    let fixes: [Location]
    let batchSize: Int
    package let backpressure: ReplayBackpressure?

    package init(_ fixes: [Location], batchSize: Int) {
        self.fixes = fixes
        self.batchSize = max(1, batchSize)
        backpressure = ReplayBackpressure()
    }

    package func openSession(_ handler: @escaping @Sendable ([SourceEvent]) -> Void) throws(LocationError) -> any SourceSession {
        let (fixes, batchSize, backpressure) = (fixes, batchSize, backpressure)
        return try ReaderThread.start(name: "prepared", resources: .system) { reader in
            var batch: [SourceEvent] = [.connected]
            batch.reserveCapacity(batchSize)
            func flush() {
                guard !batch.isEmpty, !reader.isClosed else { return }
                handler(batch)
                batch.removeAll(keepingCapacity: true)
            }
            for fix in fixes {
                do throws(SystemError) {
                    try backpressure?.waitForConsumers(on: reader, flushing: flush)
                } catch {
                    return handler([.failed(error.locationError(.resourceUnavailable, "cannot wait for the consumers"))])
                }
                guard !reader.isClosed else { return }
                batch.append(.report(.fix(fix)))
                if batch.count >= batchSize { flush() }
            }
            batch.append(.finished)
            flush()
        }
    }
}

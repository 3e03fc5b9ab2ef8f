import Synchronization

extension MQTTSubscriber {
    /// The ``messages`` in batches: each batch is every message that arrived while the consumer was busy with the
    /// previous one, up to `maximumCount`, in order; the first waits for at least one message. So a consumer that
    /// writes a batch per statement writes one row per statement while messages trickle in, and as many as have
    /// piled up when they pour in, with no timer and no added latency.
    ///
    /// What piles up is bounded by the broker's in-flight window, as for ``messages``: acknowledge a batch once it is
    /// stored. Finishes (or throws) when ``messages`` does; only one iterator.
    ///
    /// ```swift
    /// for try await batch in subscriber.batches(maximumCount: 1000) {
    ///     try await store(batch)
    ///     subscriber.acknowledge(batch.compactMap(\.packetID))
    /// }
    /// ```
    public func batches(maximumCount: Int) -> MQTTMessageBatches {
        MQTTMessageBatches(messages: messages, maximumCount: max(maximumCount, 1))
    }
}

/// ``MQTTSubscriber/batches(maximumCount:)``'s sequence.
public struct MQTTMessageBatches: AsyncSequence, Sendable {
    public typealias Element = [MQTTMessage]
    let messages: AsyncThrowingStream<MQTTMessage, any Error>
    let maximumCount: Int

    public func makeAsyncIterator() -> Iterator {
        let gatherer = Gatherer()
        let pump = Task { [messages] in
            do {
                for try await message in messages { gatherer.add(message) }
                gatherer.finish(nil)
            } catch {
                gatherer.finish(error)
            }
        }
        return Iterator(gatherer: gatherer, pump: pump, maximumCount: maximumCount)
    }

    public struct Iterator: AsyncIteratorProtocol {
        fileprivate let gatherer: Gatherer
        let pump: Task<Void, Never>
        let maximumCount: Int

        public mutating func next() async throws -> [MQTTMessage]? {
            try await gatherer.next(maximumCount: maximumCount, pump: pump)
        }
    }
}

/// Messages that came and are not yet taken, and the consumer waiting for some: one lock, decisions under it,
/// resumptions after it.
private final class Gatherer: Sendable {
    private struct State {
        var waiting: [MQTTMessage] = []
        var end: Result<Void, any Error>?
        var consumer: CheckedContinuation<[MQTTMessage]?, any Error>?
        var maximumCount = 1
    }

    private let state = Mutex(State())

    func add(_ message: MQTTMessage) {
        let (consumer, batch) = state.withLock { state -> (CheckedContinuation<[MQTTMessage]?, any Error>?, [MQTTMessage]) in
            state.waiting.append(message)
            guard let consumer = state.consumer else { return (nil, []) }
            state.consumer = nil
            return (consumer, Self.take(&state))
        }
        consumer?.resume(returning: batch)
    }

    func finish(_ error: (any Error)?) {
        let consumer = state.withLock { state -> CheckedContinuation<[MQTTMessage]?, any Error>? in
            state.end = error.map { .failure($0) } ?? .success(())
            defer { state.consumer = nil }
            return state.consumer
        }
        // A consumer waits only when nothing is waiting: the end is all there is to tell it.
        if let error { consumer?.resume(throwing: error) } else { consumer?.resume(returning: nil) }
    }

    func next(maximumCount: Int, pump: Task<Void, Never>) async throws -> [MQTTMessage]? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[MQTTMessage]?, any Error>) in
                enum Now { case batch([MQTTMessage]), end(Result<Void, any Error>), cancelled, wait }
                let now = state.withLock { state -> Now in
                    state.maximumCount = maximumCount
                    if !state.waiting.isEmpty { return .batch(Self.take(&state)) }
                    if let end = state.end { return .end(end) }
                    if Task.isCancelled { return .cancelled }
                    state.consumer = continuation
                    return .wait
                }
                switch now {
                case .batch(let batch): continuation.resume(returning: batch)
                case .end(.success): continuation.resume(returning: nil)
                case .end(.failure(let error)): continuation.resume(throwing: error)
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .wait: break
                }
            }
        } onCancel: {
            pump.cancel()
            let consumer = state.withLock { state in
                defer { state.consumer = nil }
                return state.consumer
            }
            consumer?.resume(throwing: CancellationError())
        }
    }

    /// Takes up to the maximum of the waiting messages, oldest first.
    private static func take(_ state: inout State) -> [MQTTMessage] {
        guard state.waiting.count > state.maximumCount else {
            defer { state.waiting.removeAll(keepingCapacity: true) }
            return state.waiting
        }
        let batch = Array(state.waiting.prefix(state.maximumCount))
        state.waiting.removeFirst(state.maximumCount)
        return batch
    }
}

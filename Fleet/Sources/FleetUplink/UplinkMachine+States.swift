import GPSDLocation

// The uplink machine's states, each a struct made from the one before it, so that a transition the diagram does not
// have cannot be written; and what each input returns.
extension UplinkMachine {
    /// The pacing the machine keeps to.
    struct Settings: Sendable {
        /// Fixes published and not acknowledged, at most.
        var window: Int
        /// Fixes read from the queue at a time.
        var batchSize: Int
        /// How long a connection may take from its start to the broker's CONNACK.
        var connectTimeout: Duration
        /// When to try again after a failure.
        var reconnectPolicy: ReconnectPolicy
        /// Acknowledged fixes leave the queue in batches of this many, or after `flushInterval`, whichever first.
        var flushCount = 256
        var flushInterval: Duration = .milliseconds(500)
        /// How long a stop waits for the broker to acknowledge `offline`.
        var closeTimeout: Duration = .seconds(2)
    }

    /// A connection under way: attempt `attempt`, after `failures` failures in a row; given up at `deadline`
    /// without a CONNACK.
    struct Connecting: Sendable, Equatable {
        var attempt: Int
        var failures: Int
        var deadline: Instant

        init(attempt: Int, failures: Int, deadline: Instant) {
            self.attempt = attempt
            self.failures = failures
            self.deadline = deadline
        }

        init(after waiting: Waiting, deadline: Instant) {
            self.init(attempt: waiting.failures + 1, failures: waiting.failures, deadline: deadline)
        }
    }

    /// Connected: fixes flow.
    struct Online: Sendable, Equatable {
        /// Fixes published and not acknowledged: message id → sequence number.
        var inFlight: [Int32: Int64] = [:]
        /// The state topic's message in flight, and the newest fix it carried.
        var stateMessage: Int32?
        var stateSeq: Int64 = 0
        /// Fixes read from the queue and not yet published; `next` is the first of them.
        var buffer: [QueuedFix] = []
        var next = 0
        /// The newest fix published on this connection: the backlog resumes after it.
        var cursor: Int64
        /// A read of the queue is asked for and not answered yet.
        var reading = false
        /// An empty read found nothing after the cursor up to this sequence number.
        var readUpTo: Int64 = 0

        init(from connecting: Connecting, cursor: Int64) {
            self.cursor = cursor
        }

        /// What to send now: the newest fix on the state topic when none is in flight, then the queue's fixes in
        /// order until the window is full, asking for the next batch when the buffer runs out.
        mutating func sends(newest: QueuedFix?, lastSeq: Int64, settings: Settings) -> Sends {
            var sends = Sends()
            if stateMessage == nil, let newest, newest.seq > stateSeq {
                sends.state = newest
                stateSeq = newest.seq
            }
            let room = settings.window - inFlight.count
            if room > 0, next < buffer.count {
                let end = min(buffer.count, next + room)
                sends.fixes = Array(buffer[next..<end])
                next = end
                cursor = sends.fixes[sends.fixes.count - 1].seq
                if next == buffer.count {
                    buffer.removeAll(keepingCapacity: true)
                    next = 0
                }
            }
            if inFlight.count + sends.fixes.count < settings.window, buffer.isEmpty, !reading,
               lastSeq > max(cursor, readUpTo) {
                reading = true
                sends.read = BatchRead(after: cursor, limit: settings.batchSize)
            }
            return sends
        }
    }

    /// Waiting before the next attempt, after `failures` failures in a row.
    struct Waiting: Sendable, Equatable {
        var failures: Int
        var until: Instant
    }

    /// Stopping: `offline` is published; the connection closes once it is acknowledged, or at `deadline`.
    struct Closing: Sendable, Equatable {
        var inFlight: [Int32: Int64]
        var offlineMessage: Int32?
        var deadline: Instant

        init(from online: Online, deadline: Instant) {
            inFlight = online.inFlight
            self.deadline = deadline
        }
    }

    // MARK: - Results

    /// Fixes to read from the queue: up to `limit` after sequence number `after`.
    struct BatchRead: Sendable, Equatable {
        var after: Int64
        var limit: Int
    }

    /// What to publish now, in this order: the state topic's fix, then the fixes; then the batch to read.
    struct Sends: Sendable, Equatable {
        var state: QueuedFix?
        var fixes: [QueuedFix] = []
        var read: BatchRead?
    }

    /// A connection ended, or could not be made: what to tell, how long to wait, what to remove from the queue.
    struct Retry: Sendable, Equatable {
        /// ``UplinkState/refused(_:)`` or ``UplinkState/disconnected(_:)``.
        var reason: UplinkState
        var delay: Duration
        var remove: [Int64]
    }

    enum OnStart: Sendable, Equatable {
        case connect(attempt: Int)
        case ignored
    }

    enum OnConnack: Sendable, Equatable {
        /// Online: publish `online` on the status topic, then these.
        case online(Sends)
        /// Refused: close the connection and wait.
        case refused(Retry)
        case ignored
    }

    enum OnConnectionEnded: Sendable, Equatable {
        /// Close what is left of the connection and wait.
        case retry(Retry)
        /// The connection a stop was closing is gone: remove these, and stop.
        case stopped(remove: [Int64])
        case ignored
    }

    enum OnAcknowledged: Sendable, Equatable {
        /// Send these; `acknowledged` is the fix the broker took (nil: the state topic's message); remove these.
        case sent(Sends, acknowledged: Int64?, remove: [Int64])
        /// The broker took `offline`: remove these and disconnect.
        case closed(acknowledged: Int64?, remove: [Int64])
        case ignored
    }

    enum OnTimer: Sendable, Equatable {
        case none
        /// The wait is over: a new connection.
        case connect(attempt: Int)
        /// No CONNACK in time: close the connection and wait.
        case connectionEnded(OnConnectionEnded)
        /// Acknowledged fixes to remove from the queue (maybe none).
        case remove([Int64])
        /// `offline` was not acknowledged in time: remove these and disconnect.
        case close(remove: [Int64])
    }

    enum OnStop: Sendable, Equatable {
        /// Stopped: remove these; drop the connection under way, if `dropConnection`.
        case stopped(remove: [Int64], dropConnection: Bool)
        /// Remove these, then publish `offline` and report its message id (``offlinePublished(_:now:)``).
        case publishOffline(remove: [Int64])
        case ignored
    }

    enum OnOfflinePublished: Sendable, Equatable {
        /// Wait for its acknowledgement (or the deadline).
        case wait
        /// Remove these and disconnect now.
        case disconnect(remove: [Int64])
        case ignored
    }
}

import Foundation

extension LocationManagerStateMachine {
    /// An event of session `number`; events of a session that has ended, or is not the current one, are ignored.
    mutating func handle(_ event: SourceEvent, session number: Int, now: Duration) -> [Action] {
        guard isCurrent(session: number) else { return [] }
        switch event {
        case .report(let report): return handle(report, now: now)
        case .skippedLine:
            skippedLine()
            return []
        case .failed(let error): return endSession(with: error)
        case .finished: return endSession(with: nil)
        }
    }

    private mutating func handle(_ report: GPSDReport, now: Duration) -> [Action] {
        switch report {
        case .fix(let location):
            return receive(location, age: nil, now: now)
        case .poll(let time, let reports):
            return reports.flatMap { report -> [Action] in
                guard case .fix(let location) = report else { return [] }
                return receive(location, age: Self.age(of: location, polledAt: time), now: now)
            }
        case .sky(let count):
            return receive(count)
        case .error(let message):
            // gpsd answers a command it cannot carry out (a WATCH of a device it does not have) with ERROR.
            return endSession(with: LocationError(.protocolError, "gpsd: \(message)"))
        case .noFix, .version, .devices, .other:
            return []
        }
    }

    /// The session ended by itself: everything waiting on it ends, observers hear of it, and it is closed.
    private mutating func endSession(with error: LocationError?) -> [Action] {
        end(with: error) + observe(.sessionEnded(error)) + sessionEnded()
    }

    /// How old a fix from a POLL reply was, by gpsd's clock: the poll's time minus the fix's. Only when the
    /// two are plausibly on the same clock (0 to 1 day apart); a replayed log's fix times can be years off,
    /// and then gpsd holding the fix is the best freshness we know.
    static func age(of location: Location, polledAt time: Date?) -> Duration {
        guard let time, let fixTime = location.timestamp else { return .zero }
        let seconds = time.timeIntervalSince(fixTime)
        return (0...86_400).contains(seconds) ? .seconds(seconds) : .zero
    }
}

import Foundation
import GPSDLocation
import GPSDSystem
import GPSDTestSupport
import Logging
import Testing

/// What reaches a consumer: only fixes with a time, each with when it arrived; values that cannot be true are
/// counted and logged once per kind; a stream says how many fixes its buffer dropped.
@Suite("LocationManager: what a fix carries, and what is kept out", .timeLimit(.minutes(1)))
struct FixCompletenessTests: ManagerTesting {
    let rig = ManagerRig()

    @Test func aFixWithoutATimeIsHeldBackUntilItsCycleBringsTheTime() {
        manager.startUpdatingLocation()
        // The GGA before the RMC: a position, no date yet.
        source.send(.report(.fixWithoutTime(device: Location.sample(second: 1).device)))
        source.send(Location.sample(second: 1))
        drain()
        #expect(delegate.locations == [Location.sample(second: 1)])
        #expect(manager.statistics.fixesWithoutTime == 1)
    }

    @Test func everyFixCarriesWhenItArrived() throws {
        manager.startUpdatingLocation()
        clock.advance(by: .seconds(42))
        source.send(Location.sample(second: 1))
        drain()
        let delivered = try #require(delegate.locations.first)
        let arrival = try #require(delivered.arrival)
        #expect(arrival.date == Date(timeIntervalSince1970: 1_748_779_200 + 42), "the manual clock's wall time")
        #expect(manager.location?.arrival == arrival)
    }

    @Test func theAgeOfAFixIsMeasuredOnTheMonotonicClock() throws {
        let source = ScriptedSource()
        let manager = LocationManager(source: source)   // the system's clocks
        manager.startUpdatingLocation()
        source.send(Location.sample(second: 1))
        let first = try #require(manager.location?.age)
        let second = try #require(manager.location?.age)
        #expect(first >= .zero && second >= first, "\(first), then \(second)")
        manager.stopUpdatingLocation()
    }

    @Test func aHeldFixIsAsOldAsGPSDHeldIt() throws {
        manager.startUpdatingLocation()
        clock.advance(by: .seconds(100))
        let fix = Location.sample(second: 5)
        source.send(.report(.poll(time: fix.timestamp.addingTimeInterval(2), reports: [.fix(fix)])))
        let arrival = try #require(manager.location?.arrival)
        #expect(arrival.date == Date(timeIntervalSince1970: 1_748_779_200 + 100), "when it reached us")
        #expect(arrival.delay == .seconds(2), "gpsd held it 2 s, by its clock")
    }

    @Test func impossibleValuesAreCountedAndLoggedOncePerKind() {
        let logged = LoggedMessages()
        manager.logger = Logger(label: "test") { _ in logged }
        manager.startUpdatingLocation()
        for _ in 0..<3 {
            source.send(.rejected(ReportProblem(.latitude, "91.5")))
            source.send(.rejected(ReportProblem(.altitude, "1e+308")))
        }
        source.send(.rejected(ReportProblem(.time, "2024-13-45T99:99:99Z")))
        #expect(manager.statistics.rejectedFixes == 3)
        #expect(manager.statistics.rejectedValues == 4)
        #expect(logged.messages.count == 3, "once per kind: \(logged.messages)")
        #expect(logged.messages.first?.contains("a latitude beyond ±90° (91.5)") == true, "\(logged.messages)")
        #expect(logged.messages.allSatisfy { $0.hasPrefix("warning ") })
    }

    @Test func aStreamCountsTheFixesItsBufferDropped() async throws {
        let gps = AsyncLocationManager(manager: manager)
        let updates = gps.updates(bufferingPolicy: .bufferingNewest(2))
        for second in 1...10 { source.send(Location.sample(second: second)) }
        #expect(updates.droppedCount == 8)
        var iterator = updates.makeAsyncIterator()
        #expect(try await iterator.next() == Location.sample(second: 9), "the newest two are kept")
        await gps.stop()
    }
}

/// A swift-log handler that keeps what is logged: "level message".
final class LoggedMessages: LogHandler, @unchecked Sendable {
    private let storage = Locked<[String]>([])
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    var messages: [String] { storage.withLock { $0 } }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        storage.withLock { $0.append("\(event.level) \(event.message)") }
    }
}

import Foundation
import GPSDCore
import GPSDLocation
import GPSDTestSupport
import Testing

/// Every kind of stream lets a replay go on once its consumer stops: when its iterator goes, though the sequence is
/// kept, and when its task is cancelled. A reader of `updates()` beside it gets every fix of the recording. A
/// stream that still held the replay back would leave the reader waiting for ever, which the time limit catches.
@Suite("Streams that stop hold nothing back", .timeLimit(.minutes(1)))
struct StreamLeavingTests {
    /// Epochs in the recording: each a TPV, a SKY of its own satellite count and an ATT a degree on, and every
    /// fifth a report without a fix after them (the status goes from fix to fix lost and back), so that every kind
    /// of stream has elements all along; enough for several of the replay's 64 KB reads.
    static let count = 600
    static let recording: [UInt8] = {
        let lines = (0..<count).flatMap { second in
            [ReportLines.tpv(second: second), sky(second: second),
             #"{"class":"ATT","device":"/dev/ttyUSB0","heading":\#(Double(second % 360)),"pitch":1.5}"#]
                + (second % 5 == 4 ? [ReportLines.noFix] : [])
        }
        return Array(([ReportLines.devices] + lines).joined(separator: "\n").utf8) + [0x0A]
    }()

    /// A SKY whose satellite count (4 to 8) changes every epoch.
    static func sky(second: Int) -> String {
        let satellites = (1...(4 + second % 5)).map { prn in
            #"{"PRN":\#(prn),"el":\#(10 * prn),"az":\#(40 * prn),"ss":\#(30 + prn),"used":true}"#
        }
        return #"{"class":"SKY","device":"/dev/ttyUSB0","time":"\#(ReportLines.time(second))","hdop":1.1,"#
            + #""satellites":[\#(satellites.joined(separator: ","))]}"#
    }

    enum Kind: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case updates, liveUpdates, headingUpdates, statusUpdates, satelliteUpdates
        var testDescription: String { rawValue }
    }

    enum Stop: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// It takes one element and breaks out of its loop: its iterator goes; the sequence is kept.
        case iteratorGoes
        /// It takes one element and its task is cancelled; the sequence is kept.
        case taskCancelled
        var testDescription: String { rawValue }
    }

    /// A manager replaying ``recording`` as fast as possible, waiting for a consumer 2 elements behind (so that even
    /// the few status changes of a replay hold it back).
    private func replay() -> AsyncLocationManager {
        let source = RecordingSource(.contents(Self.recording, name: "streams.gpsd.json"), pace: .asFastAsPossible,
                                     backlogLimit: 2)
        return AsyncLocationManager(manager: LocationManager(source: source, clock: ManualManagerClock()))
    }

    @Test(arguments: Kind.allCases, Stop.allCases)
    func aConsumerThatStopsHoldsNothingBack(kind: Kind, stop: Stop) async throws {
        let gps = replay()
        // The reader's sequence first: it starts the replay (a status or satellite stream alone does not), which
        // waits for it, not yet iterated, once it has two fixes.
        let reader = gps.updates()
        let kept: any Sendable
        switch kind {
        case .updates: kept = try await stopping(gps.updates(), stop)
        case .liveUpdates: kept = try await stopping(gps.liveUpdates(), stop)
        case .headingUpdates: kept = try await stopping(gps.headingUpdates(filter: nil), stop)
        case .statusUpdates: kept = try await stopping(gps.statusUpdates(), stop)
        case .satelliteUpdates: kept = try await stopping(gps.satelliteUpdates(), stop)
        }
        var seconds: [Int] = []
        for try await fix in reader { seconds.append(Int(fix.timestamp.timeIntervalSince1970 - ReportLines.epoch)) }
        #expect(seconds == Array(0..<Self.count), "every fix, in order, to the recording's end")
        withExtendedLifetime(kept) {}
    }

    /// Takes one element of `sequence` and stops as `stop` says; returns the sequence, for the caller to keep.
    private func stopping<S: AsyncSequence & Sendable>(_ sequence: S, _ stop: Stop) async throws -> S
    where S.Element: Sendable {
        switch stop {
        case .iteratorGoes:
            var taken = 0
            for try await _ in sequence {
                taken += 1
                break
            }
            #expect(taken == 1)
        case .taskCancelled:
            let (tookOne, took) = AsyncStream.makeStream(of: Void.self)
            let (gateOpened, gate) = AsyncStream.makeStream(of: Void.self)
            let consumer = Task {
                var taken = 0
                for try await _ in sequence {
                    taken += 1
                    guard taken == 1 else { continue }
                    took.yield()
                    for await _ in gateOpened { break }   // cancelled meanwhile: the next next() sees it
                }
                return taken
            }
            for await _ in tookOne { break }
            consumer.cancel()
            gate.yield()
            // The stream ended for it: it got what was buffered, then the end.
            let taken = try await consumer.value
            #expect(taken >= 1)
        }
        return sequence
    }
}

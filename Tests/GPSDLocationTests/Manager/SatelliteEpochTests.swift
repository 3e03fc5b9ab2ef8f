import Foundation
import GPSDLocation
import GPSDTestSupport
import Testing

/// What the manager tells of the satellites, on a scripted source: one whole view per receiver epoch to the
/// delegate, `satelliteUpdates()` and `sky`, and an empty one when the receiver goes or loses its fix.
@Suite("LocationManager: satellites by epoch", .timeLimit(.minutes(1)))
struct SatelliteEpochTests: ManagerTesting {
    let rig = ManagerRig(reconnect: ReconnectPolicy(jitter: 0))

    /// What gpsd 3.22 sent for `multignss.nmea`, decoded by libgps: 12 epochs, each TPVs, then SKYs of a system
    /// more each.
    private static func recording() throws -> [GPSDReport] {
        let decoder = try ReportDecoder()
        let text = try String(contentsOf: Fixtures.url("multignss.gpsd.json"), encoding: .utf8)
        return text.split(whereSeparator: \.isNewline).compactMap { decoder.decode(Array($0.utf8)) }
    }

    @Test("the delegate and satelliteUpdates() get one view per epoch of a multi-GNSS receiver, every system in it")
    func oneWholeViewPerEpoch() async throws {
        let gps = AsyncLocationManager(manager: manager)
        let skies = gps.satelliteUpdates()
        manager.startUpdatingLocation()
        source.send(.connected)
        let reports = try Self.recording()
        #expect(reports.count(where: { if case .sky = $0 { true } else { false } }) == 37, "gpsd's 37 SKYs")
        for report in reports { source.send(.report(report)) }
        drain()
        let expected = try ExpectedSky.load("multignss.sky.expected.json")
        let times = expected.map { GPSDTime.date(from: $0.time) }
        // The recording ends with gpsd closing the receiver: its satellites are cleared, an empty view last.
        let views = delegate.skies
        #expect(views.count == 13 && views.last == SkyView(satellites: [], device: "/dev/pts/1"))
        #expect(manager.sky == nil)
        let whole = views.prefix(12)
        #expect(whole.map(\.timestamp) == times)
        for sky in whole {
            #expect(sky.satellites.count == 26)
            #expect(sky.constellations.map(\.constellation) == [.gps, .sbas, .galileo, .beidou, .qzss, .glonass])
            #expect(sky.constellations.map(\.visible).reduce(0, +) == sky.visible)
        }
        var streamed: [SkyView] = []
        for await sky in skies {
            streamed.append(sky)
            if streamed.count == 13 { break }
        }
        #expect(streamed == views, "the stream takes the same views")
        manager.stopUpdatingLocation()
    }

    @Test("a receiver that goes clears its satellites: sky is nil, an empty view is told, the status counts none")
    func aReceiverThatGoesClearsItsSatellites() {
        manager.startUpdatingLocation()
        source.send(.connected)
        source.send(.report(.devices(count: 1)))
        source.send(.report(.noFix(second: 0)))
        source.send(.report(.sky(SatelliteCount(visible: 10, used: 9))))
        source.send(.report(.noFix(second: 1)))
        #expect(manager.status == .waitingForFix(satellites: SatelliteCount(visible: 10, used: 9)))
        source.send(.report(.sky(SatelliteCount(visible: 10, used: 9))))   // its epoch under way
        source.send(.report(.device(path: "/dev/test", active: false)))
        #expect(manager.sky == nil)
        source.send(.report(.device(path: "/dev/test", active: true)))
        source.send(.report(.noFix(second: 5)))
        drain()
        #expect(manager.status == .waitingForFix(satellites: nil), "not the 9 of 10 from before it went")
        #expect(delegate.skies.map(\.count) == [SatelliteCount(visible: 10, used: 9), SatelliteCount(visible: 0, used: 0)],
                "the epoch under way when it went is dropped")
        #expect(delegate.skies.last == SkyView(satellites: [], device: "/dev/test"))
    }

    @Test func gpsdWithoutReceiversClearsEverySatellite() {
        manager.startUpdatingLocation()
        source.send(.connected)
        source.send(.report(.noFix(second: 0, device: "/dev/a")))
        source.send(.report(.sky(SatelliteCount(visible: 7, used: 5), device: "/dev/a")))
        source.send(.report(.noFix(second: 1, device: "/dev/a")))
        #expect(manager.sky?.count == SatelliteCount(visible: 7, used: 5))
        source.send(.report(.devices(count: 0)))
        drain()
        #expect(manager.sky == nil && manager.satellites == nil)
        #expect(delegate.skies.last == SkyView(satellites: [], device: nil))
    }

    @Test("a lost fix clears the satellites once; the receiver's next epoch gives them again")
    func aLostFixClearsTheSatellitesOnce() {
        manager.startUpdatingLocation()
        source.send(.connected)
        source.send(.report(.devices(count: 1)))
        source.send(Location.sample(second: 1))
        source.send(.report(.sky(SatelliteCount(visible: 10, used: 9))))
        source.send(Location.sample(second: 2))
        #expect(manager.sky?.count == SatelliteCount(visible: 10, used: 9))
        source.send(.report(.sky(SatelliteCount(visible: 10, used: 8))))
        source.send(.report(.noFix(second: 3)))   // lost: epoch 2's view, then the clearing
        #expect(manager.sky == nil)
        #expect(manager.status == .fixLost)
        source.send(.report(.sky(SatelliteCount(visible: 6, used: 0))))
        source.send(.report(.noFix(second: 4)))   // still no fix: epoch 3's view, nothing cleared
        source.send(.report(.sky(SatelliteCount(visible: 6, used: 0))))
        source.send(.report(.noFix(second: 5)))
        drain()
        #expect(delegate.skies.map(\.count) == [
            SatelliteCount(visible: 10, used: 9), SatelliteCount(visible: 10, used: 8), SatelliteCount(visible: 0, used: 0),
            SatelliteCount(visible: 6, used: 0), SatelliteCount(visible: 6, used: 0),
        ])
        #expect(manager.sky?.count == SatelliteCount(visible: 6, used: 0))
    }

    // MARK: Whole skies after gpsd starts again or a receiver comes back

    /// The recording's reports before its first TPV (VERSION, DEVICES, …), and its 12 epochs, each its TPVs and
    /// SKYs (of 10, 16, 21 and 26 satellites the first, as gpsd's first cycle of a receiver, 16, 21, 26 the others).
    private static func epochsOfTheRecording() throws -> (preamble: [GPSDReport], epochs: [[GPSDReport]]) {
        var preamble: [GPSDReport] = []
        var epochs: [[GPSDReport]] = []
        var time: Date?
        for report in try recording() {
            switch report {
            case .fix(let fix):
                if fix.timestamp != time { epochs.append([]) }
                time = fix.timestamp
                epochs[epochs.count - 1].append(report)
            case .sky: epochs[epochs.count - 1].append(report)
            default: if epochs.isEmpty { preamble.append(report) }
            }
        }
        return (preamble, epochs)
    }

    /// The receiver's SKYs of `epoch` alone: what gpsd sends of an epoch whose TPV it did not send, or a session did
    /// not see (opened mid-cycle).
    private static func skies(of epoch: [GPSDReport]) -> [GPSDReport] {
        epoch.filter { if case .sky = $0 { true } else { false } }
    }

    private static func time(_ second: Int) -> Date { Date(timeIntervalSince1970: 1_748_779_200 + Double(second)) }

    @Test("a receiver gpsd takes away and gives back: no view stamped with a time from before, none partial")
    func aReceiverAddedAgainGivesWholeViewsOfItsOwnEpochs() throws {
        let (preamble, epochs) = try Self.epochsOfTheRecording()
        manager.startUpdatingLocation()
        source.send(.connected)
        for report in preamble + epochs[0...4].joined() { source.send(.report(report)) }
        drain()
        let before = delegate.skies.count
        #expect(before == 5, "epochs 0 to 2 as the next began, 3 and 4 at their last SKY")
        source.send(.report(.device(path: "/dev/pts/1", active: false)))
        source.send(.report(.device(path: "/dev/pts/1", active: true)))
        // gpsd opens it again mid-cycle: the SKYs of an epoch whose TPV it did not send, its first cycle's (a SKY
        // of the GPS satellites alone first), then whole epochs from 7 on.
        for report in Self.skies(of: epochs[0]) + epochs[7...11].joined() { source.send(.report(report)) }
        drain()
        let after = delegate.skies.dropFirst(before)
        #expect(after.first == SkyView(satellites: [], device: "/dev/pts/1"), "the receiver went: an empty view")
        let views = Array(after.dropFirst())
        // Its cycle learnt afresh: 7 and 8 as the next began, then each at its last SKY.
        #expect(views.map(\.timestamp) == (7...11).map(Self.time), "the epochs from 7 on, each once")
        #expect(views.allSatisfy { $0.satellites.count == 26 }, "\(views.map(\.satellites.count))")
    }

    @Test("a new session after gpsd started again, joining its first cycle: the first view waits for an epoch seen whole")
    func aNewSessionsFirstViewIsOfAnEpochSeenWhole() throws {
        let (preamble, epochs) = try Self.epochsOfTheRecording()
        manager.startUpdatingLocation()
        source.send(.connected)
        for report in preamble + epochs[0...4].joined() { source.send(.report(report)) }
        drain()
        let before = delegate.skies.count
        source.send(.failed(LocationError(.connectionLost, "gpsd went")))
        clock.advance(by: .seconds(1))
        #expect(source.openCount == 2, "a new session")
        // The new gpsd replays the log from its start; the session joins as it reads the first cycle, whose TPVs it
        // sent before the watch began.
        source.send(.connected)
        for report in preamble + Self.skies(of: epochs[0]) + epochs[1...5].joined() { source.send(.report(report)) }
        drain()
        let views = Array(delegate.skies.dropFirst(before))
        #expect(views.map(\.timestamp) == (1...5).map(Self.time), "the epochs from 1 on, each once, each with its time")
        #expect(views.allSatisfy { $0.satellites.count == 26 }, "\(views.map(\.satellites.count))")
        manager.stopUpdatingLocation()
    }

    @Test func theEndOfARecordingPassesItsLastEpochOn() async {
        manager.startUpdatingLocation()
        source.send(.connected)
        source.send(Location.sample(second: 1))
        source.send(.report(.sky(SatelliteCount(visible: 8, used: 6))))
        drain()
        #expect(delegate.skies.isEmpty, "the epoch may bring more")
        source.send(.finished)
        drain()
        #expect(delegate.skies.map(\.count) == [SatelliteCount(visible: 8, used: 6)])
        #expect(delegate.skies.first?.timestamp == Location.sample(second: 1).timestamp)
    }
}

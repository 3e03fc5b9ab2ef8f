import GPSDLocation
import GPSDTestSupport
import Testing

/// `satelliteUpdates()`: what gpsd's SKY reports say, as they change, across sessions. (How the sequence ends is
/// in the architecture regressions.)
@Suite("Async satellite updates", .timeLimit(.minutes(1)))
struct SatelliteUpdatesTests {
    @Test func satelliteUpdatesOutliveAFailedWatch() async throws {
        let source = ScriptedSource()
        let gps = AsyncLocationManager(manager: LocationManager(source: source, clock: ManualManagerClock()))
        var satellites = gps.satelliteUpdates().makeAsyncIterator()
        let first = Task { try await gps.requestLocation(timeout: .seconds(60)) }
        await source.waitForOpening(count: 1)
        source.send(.report(.noFix(second: 0)))   // an epoch, its TPV first
        source.send(.report(.sky(SatelliteCount(visible: 9, used: 0))))
        source.send(.report(.noFix(second: 1)))   // the next epoch
        #expect(await satellites.next()?.count == SatelliteCount(visible: 9, used: 0))
        source.send(.failed(LocationError(.connectionLost, "gone")))
        _ = await first.result
        let second = Task { try await gps.requestLocation(timeout: .seconds(60)) }
        await source.waitForOpening(count: 2)
        source.send(.report(.noFix(second: 1)))
        source.send(.report(.sky(SatelliteCount(visible: 9, used: 7))))
        source.send(.report(.noFix(second: 2)))
        #expect(await satellites.next()?.count == SatelliteCount(visible: 9, used: 7), "still streaming after the failure")
        source.send(Location.sample(second: 1))
        _ = try await second.value
    }
}

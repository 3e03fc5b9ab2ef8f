import Dispatch
import Foundation
import GPSDLocation
import GPSDTestSupport
import Testing

/// ``LocationManager`` driven by a ``ScriptedSource`` and a ``ManualManagerClock`` (see ``ManagerTesting``).
@Suite("LocationManager: one-shot requests, failures and the end of a source")
struct LocationManagerRequestTests: ManagerTesting {
    let rig = ManagerRig()

    // MARK: One-shot requests

    @Test func requestLocationDeliversOneFixThenStops() {
        manager.requestLocation()
        #expect(source.openCount == 1)
        let first = Location.sample(second: 1)
        #expect(source.send(first))
        #expect(source.closeCount == 1)
        #expect(!source.isRunning)
        #expect(!source.send(Location.sample(second: 2)))
        drain()
        #expect(delegate.events == [.locations([first])])
    }

    @Test func requestLocationWaitsForDesiredAccuracy() {
        manager.desiredAccuracy = 10
        manager.requestLocation()
        source.send(Location.sample(second: 1, accuracy: 50))
        source.send(Location.sample(second: 2, accuracy: nil))
        #expect(source.isRunning)
        let good = Location.sample(second: 3, accuracy: 5)
        source.send(good)
        #expect(!source.isRunning)
        drain()
        #expect(delegate.events == [.locations([good])])
        #expect(manager.location == good)
    }

    @Test func requestLocationTimesOutWithTheBestLocation() throws {
        manager.desiredAccuracy = 10
        manager.requestLocation()
        #expect(clock.pendingTimerCount == 1)
        let poor = Location.sample(second: 1, accuracy: 50)
        source.send(poor)
        clock.advance(by: manager.requestTimeout - .milliseconds(1))
        drain()
        #expect(delegate.events == [])
        #expect(source.isRunning)

        clock.advance(by: .milliseconds(1))
        drain()
        #expect(delegate.events.count == 1)
        let error = try #require(delegate.errors.first)
        #expect(error.code == .locationUnknown)
        #expect(error.bestLocation == poor)
        #expect(source.closeCount == 1)
        #expect(!source.isRunning)

        // A fix after the timeout does not reach the delegate, nor does time.
        #expect(!source.send(Location.sample(second: 2, accuracy: 1)))
        clock.advance(by: manager.requestTimeout * 2)
        drain()
        #expect(delegate.events.count == 1)
    }

    @Test func requestTimeoutIsConfigurable() throws {
        #expect(manager.requestTimeout == LocationManager.defaultRequestTimeout)
        #expect(LocationManager.defaultRequestTimeout == .seconds(30))
        manager.requestTimeout = .seconds(5)
        manager.requestLocation()
        clock.advance(by: .seconds(5))
        drain()
        let error = try #require(delegate.errors.first)
        #expect(error.code == .locationUnknown)
        #expect(error.bestLocation == nil)
        #expect(delegate.events.count == 1)
    }

    @Test func requestFulfilledBeforeTheTimeoutDoesNotFailLater() {
        manager.requestLocation()
        let fix = Location.sample(second: 1)
        source.send(fix)
        clock.advance(by: manager.requestTimeout * 2)
        drain()
        #expect(delegate.events == [.locations([fix])])
    }

    @Test func secondRequestReplacesThePendingOne() throws {
        manager.requestLocation()
        clock.advance(by: .seconds(20))
        manager.requestLocation()
        #expect(source.openCount == 1)
        clock.advance(by: .seconds(10))   // the first request's deadline: replaced, so nothing
        drain()
        #expect(delegate.events == [])
        clock.advance(by: .seconds(20))   // the second's
        drain()
        #expect(delegate.errors.map(\.code) == [.locationUnknown])
        #expect(delegate.events.count == 1)
    }

    @Test func requestWhileUpdatingDeliversOnceAndKeepsUpdating() {
        manager.startUpdatingLocation()
        manager.requestLocation()
        let sent = fixes(1...3)
        for fix in sent { source.send(fix) }
        drain()
        #expect(delegate.locations == sent)
        #expect(source.closeCount == 0)
    }

    @Test func requestTimeoutWhileUpdatingKeepsTheSourceRunning() throws {
        manager.startUpdatingLocation()
        manager.requestLocation()
        clock.advance(by: manager.requestTimeout)
        #expect(source.isRunning)
        let fix = Location.sample(second: 1)
        source.send(fix)
        drain()
        #expect(delegate.errors.map(\.code) == [.locationUnknown])
        #expect(delegate.locations == [fix])
    }

    @Test func stopCancelsAPendingRequest() {
        manager.requestLocation()
        manager.stopUpdatingLocation()
        #expect(!source.isRunning)
        clock.advance(by: manager.requestTimeout)
        drain()
        #expect(delegate.events == [])
    }

    // MARK: Failures and the end of a source

    @Test func sourceFailureIsReportedOnceAndEndsUpdates() throws {
        manager.startUpdatingLocation()
        source.send(Location.sample(second: 1))
        let failure = LocationError(.connectionLost, "connection to gpsd at localhost:2947 lost: gpsd closed the connection")
        source.send(.failed(failure))
        source.send(Location.sample(second: 2))          // the scripted source still holds the handler
        source.send(.failed(LocationError(.connectionLost, "again")))
        drain()
        #expect(delegate.events == [.locations([Location.sample(second: 1)]), .failure(failure)])
        #expect(try #require(delegate.errors.first).code == .connectionLost)

        manager.startUpdatingLocation()                   // a new start connects again
        #expect(source.openCount == 2)
        source.send(Location.sample(second: 3))
        drain()
        #expect(delegate.locations.last == Location.sample(second: 3))
    }

    @Test func sourceFailureDuringARequestIsReportedOnce() {
        manager.requestLocation()
        let failure = LocationError(.gpsdUnavailable, "cannot connect to gpsd", errorNumber: ECONNREFUSED)
        source.send(.failed(failure))
        clock.advance(by: manager.requestTimeout)   // the request is over: its timer does nothing
        drain()
        #expect(delegate.events == [.failure(failure)])
    }

    @Test func finishedDuringARequestIsLocationUnknown() throws {
        manager.desiredAccuracy = 10
        manager.requestLocation()
        let poor = Location.sample(second: 1, accuracy: 80)
        source.send(poor)
        source.send(.finished)
        clock.advance(by: manager.requestTimeout)
        drain()
        #expect(delegate.events.count == 1)
        let error = try #require(delegate.errors.first)
        #expect(error.code == .locationUnknown)
        #expect(error.bestLocation == poor)
    }

    @Test func finishedEndsContinuousUpdatesQuietly() {
        manager.startUpdatingLocation()
        source.send(Location.sample(second: 1))
        source.send(.finished)
        source.send(Location.sample(second: 2))
        drain()
        #expect(delegate.events == [.locations([Location.sample(second: 1)])])
    }

    @Test func failureEventWithoutDemandIsIgnored() {
        manager.requestLocation()
        source.send(Location.sample(second: 1))   // fulfils the request and stops the source
        #expect(!source.send(.failed(LocationError(.connectionLost, "late"))))
        drain()
        #expect(delegate.errors.isEmpty)
    }
}

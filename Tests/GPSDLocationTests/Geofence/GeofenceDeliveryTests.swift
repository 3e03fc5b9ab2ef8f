import GPSDLocation
import GPSDTestSupport
import Testing

/// `GeofenceMonitor`'s events on their way out: to the sequences and the delegate, in the order decided, from
/// fixes fed one by one or by `monitor(_:)`, while regions change and threads compete.
@Suite("Geofence monitor delivery", .timeLimit(.minutes(1)))
struct GeofenceDeliveryTests {
    typealias Event = GeofenceEvent<ManualClock.Instant>

    let ground = Ground()

    // MARK: Delivery

    @Test func everyEventReachesTheSequencesAndTheDelegateInOrder() async throws {
        let clock = ManualClock()
        let monitor = GeofenceMonitor(clock: clock)
        let recorder = GeofenceRecorder<ManualClock>()
        monitor.delegate = recorder
        let events = monitor.events()
        var decided: [Event] = []
        decided.append(monitor.add(try ground.region("a", radius: 50)))
        decided.append(monitor.add(try ground.region("b", east: 60, radius: 50)))
        let track = [0.0, 30, 100, 30, 0, -100, 0].map { ground.fix(east: $0) }
        for fix in track.prefix(3) {
            clock.advance(by: .seconds(1))
            decided += monitor.process(fix)
        }
        let later = monitor.events()  // gets only what is decided from now on
        let decidedBeforeLater = decided.count
        for fix in track.dropFirst(3) {
            clock.advance(by: .seconds(1))
            decided += monitor.process(fix)
        }
        decided.append(monitor.add(try ground.region("c", north: 1000, radius: 100)))
        monitor.finish()

        // 2 initial states, 2 + 1 + 1 + 1 + 1 + 1 + 1 changes along the track, 1 initial state.
        #expect(decided.count == 11)
        #expect(await events.collected() == decided)
        #expect(await later.collected() == Array(decided.dropFirst(decidedBeforeLater)))
        #expect(recorder.events == decided)

        // Finished: no more fixes, no more events, no more sequences.
        #expect(monitor.isFinished)
        #expect(monitor.process(ground.fix(north: 1000)).isEmpty)
        #expect(monitor.state(of: "c") == .outside)
        #expect(await monitor.events().collected().isEmpty)
        #expect(recorder.events == decided)
    }

    @Test func theDelegateMayChangeTheRegionsAndHearsOfItAfterwards() async throws {
        let porch = try ground.region("porch", north: 30, radius: 20)
        let recorder = GeofenceRecorder<ManualClock> { monitor, event in
            if event.identifier == "home", event.state == .inside { monitor.add(porch) }
        }
        let monitor = GeofenceMonitor(clock: ManualClock())
        monitor.delegate = recorder
        let events = monitor.events()
        let home = monitor.add(try ground.region("home", radius: 50))
        let arriving = ground.fix(north: 28)
        let entered = monitor.process(arriving)
        #expect(entered == [.expected("home", .unknown, .inside, by: arriving)])
        monitor.finish()
        let expected = [home] + entered + [.expected("porch", .unknown, .inside, by: arriving, initial: true)]
        #expect(recorder.events == expected)
        #expect(await events.collected() == expected)
    }

    @Test func releasingTheMonitorEndsItsSequences() async throws {
        var monitor: GeofenceMonitor<ManualClock>? = GeofenceMonitor(clock: ManualClock())
        let events = monitor?.events()
        monitor?.add(try ground.region("home", radius: 50))
        monitor = nil
        #expect(await events?.collected().map(\.identifier) == ["home"])
    }

    // MARK: Feeding a sequence

    @Test func monitorTakesEveryFixOfASequenceUntilItEnds() async throws {
        let monitor = GeofenceMonitor(clock: ManualClock())
        monitor.add(try ground.region("home", radius: 50))
        let events = monitor.events()
        let (fixes, feed) = AsyncStream.makeStream(of: Location.self)
        let running = Task { try await monitor.monitor(fixes) }
        for north in [200.0, 100, 0, 10, 200, 300] { feed.yield(ground.fix(north: north)) }
        feed.finish()
        try await running.value
        #expect(monitor.state(of: "home") == .outside)
        monitor.finish()
        #expect(await events.collected().map(\.state) == [.outside, .inside, .outside])
    }

    @Test func monitorEndsWhenItsTaskIsCancelled() async throws {
        let monitor = GeofenceMonitor(clock: ManualClock())
        monitor.add(try ground.region("home", radius: 50))
        var events = monitor.events().makeAsyncIterator()
        let (fixes, feed) = AsyncStream.makeStream(of: Location.self)
        let running = Task { try await monitor.monitor(fixes) }
        feed.yield(ground.fix())
        #expect(await events.next()?.state == .inside, "running")
        running.cancel()
        try await running.value
        guard case .terminated = feed.yield(ground.fix(north: 200)) else {
            Issue.record("the fixes are still being read")
            return
        }
        #expect(monitor.state(of: "home") == .inside)
        #expect(!monitor.isFinished, "cancelling the feeding task does not finish the monitor")
    }

    @Test func monitorEndsAtTheFirstFixAfterFinish() async throws {
        let monitor = GeofenceMonitor(clock: ManualClock())
        monitor.add(try ground.region("home", radius: 50))
        var events = monitor.events().makeAsyncIterator()
        let (fixes, feed) = AsyncStream.makeStream(of: Location.self)
        let running = Task { try await monitor.monitor(fixes) }
        feed.yield(ground.fix())
        #expect(await events.next()?.state == .inside, "running")
        monitor.finish()
        #expect(await events.next() == nil, "finish ends the sequences")
        feed.yield(ground.fix(north: 200))  // noticed here: not taken
        try await running.value
        #expect(monitor.state(of: "home") == .inside)
        feed.finish()
    }

    @Test func regionsAddedAndRemovedWhileFixesFlow() async throws {
        let monitor = GeofenceMonitor(clock: ManualClock())
        var events = monitor.events().makeAsyncIterator()
        let (fixes, feed) = AsyncStream.makeStream(of: Location.self)
        let running = Task { try await monitor.monitor(fixes) }

        monitor.add(try ground.region("home", radius: 50))
        #expect(await events.next() == .expected("home", .unknown, .unknown, by: nil, initial: true))
        let here = ground.fix()
        feed.yield(here)
        #expect(await events.next() == .expected("home", .unknown, .inside, by: here))
        monitor.add(try ground.region("work", north: 300, radius: 50))
        #expect(await events.next() == .expected("work", .unknown, .outside, by: here, initial: true))
        monitor.remove(identifier: "home")
        let atWork = ground.fix(north: 300)
        feed.yield(atWork)
        #expect(await events.next() == .expected("work", .outside, .inside, by: atWork), "home is not left")
        let back = ground.fix()
        feed.yield(back)
        feed.finish()
        try await running.value
        monitor.finish()
        #expect(await events.next() == .expected("work", .inside, .outside, by: back))
        #expect(await events.next() == nil, "nothing else")
    }

    // MARK: Threads

    @Test func concurrentFixesAndRegionChangesKeepOneOrder() async throws {
        let ground = self.ground
        let monitor = GeofenceMonitor()  // the continuous clock
        let recorder = GeofenceRecorder<ContinuousClock>()
        monitor.delegate = recorder
        let events = monitor.events(bufferingPolicy: .unbounded)
        let regions = try (0..<4).map { try ground.region("r\($0)", east: Double($0) * 100, radius: 50) }
        let extra = try ground.region("extra", east: 150, radius: 80)
        for region in regions { monitor.add(region) }
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    for step in 0..<200 {
                        monitor.process(ground.fix(east: Double((step * 37 + worker * 53) % 400) - 20))
                        if step % 50 == 0 { monitor.add(regions[worker]) }
                    }
                }
            }
            group.addTask {
                for _ in 0..<50 {
                    monitor.add(extra)
                    monitor.remove(identifier: "extra")
                }
            }
        }
        monitor.finish()
        let streamed = await events.collected()
        let initialStates = streamed.filter(\.isInitial).count
        #expect(initialStates == 70, "every add reports an initial state: 4 + 4 × 4 + 50")
        #expect(recorder.events == streamed)

        // Each region's events follow on from each other: a change starts where the last event left it.
        var last: [String: GeofenceState] = [:]
        for event in streamed {
            if event.isInitial {
                #expect(event.previousState == .unknown)
            } else {
                #expect(event.previousState == last[event.identifier] && event.state != event.previousState)
            }
            last[event.identifier] = event.state
        }
        #expect(zip(streamed, streamed.dropFirst()).allSatisfy { $0.instant <= $1.instant }, "decision order")
        for region in regions { #expect(monitor.state(of: region.identifier) == last[region.identifier]) }
    }
}

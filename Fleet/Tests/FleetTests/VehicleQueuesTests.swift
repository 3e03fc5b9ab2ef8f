import FleetCore
@testable import FleetIngest
import Testing

/// Which queues a vehicle's fixes come from, as a value: a queue made again, and two uplinks as one vehicle.
@Suite struct VehicleQueuesTests {
    let robot = try! VehicleID("robot-7")
    let t0 = ContinuousClock.now

    @Test func oneQueueIsNoNews() {
        var queues = VehicleQueues()
        for second in 0..<300 { #expect(queues.saw(robot, queue: "a", now: t0 + .seconds(second)) == nil) }
    }

    @Test func aNewQueueIsToldOnceWithTheOneBeforeItAtOnceOrLater() {
        var queues = VehicleQueues(window: .seconds(60))
        _ = queues.saw(robot, queue: "", now: t0)
        #expect(queues.saw(robot, queue: "b", now: t0 + .seconds(1))
                == .newQueue(vehicle: robot, queue: "b", previous: ""), "the old queue's last fix a second before")
        for second in 2..<100 { #expect(queues.saw(robot, queue: "b", now: t0 + .seconds(second)) == nil) }
        #expect(queues.saw(robot, queue: "c", now: t0 + .seconds(500))
                == .newQueue(vehicle: robot, queue: "c", previous: "b"))
    }

    @Test func twoQueuesTakingTurnsAreTwoUplinksToldOncePerPair() {
        var queues = VehicleQueues(window: .seconds(60))
        _ = queues.saw(robot, queue: "a", now: t0)
        _ = queues.saw(robot, queue: "b", now: t0 + .milliseconds(10))
        #expect(queues.saw(robot, queue: "a", now: t0 + .milliseconds(20))
                == .twoUplinks(vehicle: robot, queues: ["a", "b"]))
        for step in 3..<100 {
            let queue = step.isMultiple(of: 2) ? "a" : "b"
            #expect(queues.saw(robot, queue: queue, now: t0 + .milliseconds(10 * step)) == nil)
        }
        #expect(queues.saw(robot, queue: "c", now: t0 + .seconds(2)) == .newQueue(vehicle: robot, queue: "c", previous: "b"))
        #expect(queues.saw(robot, queue: "a", now: t0 + .seconds(3)) == .twoUplinks(vehicle: robot, queues: ["a", "c"]))
    }

    @Test func aQueueBackAfterAnOutageWhileAnotherRanIsTwoUplinks() {
        var queues = VehicleQueues(window: .seconds(60))
        _ = queues.saw(robot, queue: "a", now: t0)
        _ = queues.saw(robot, queue: "b", now: t0 + .seconds(10))
        _ = queues.saw(robot, queue: "b", now: t0 + .seconds(3600))
        #expect(queues.saw(robot, queue: "a", now: t0 + .seconds(3601))
                == .newQueue(vehicle: robot, queue: "a", previous: "b"), "a was forgotten: new again")
        #expect(queues.saw(robot, queue: "b", now: t0 + .seconds(3602)) == .twoUplinks(vehicle: robot, queues: ["a", "b"]))
    }

    @Test func anotherVehiclesQueuesAreItsOwn() throws {
        var queues = VehicleQueues()
        let other = try VehicleID("robot-8")
        _ = queues.saw(robot, queue: "a", now: t0)
        #expect(queues.saw(other, queue: "b", now: t0) == nil)
        #expect(queues.saw(robot, queue: "a", now: t0 + .seconds(1)) == nil)
    }
}

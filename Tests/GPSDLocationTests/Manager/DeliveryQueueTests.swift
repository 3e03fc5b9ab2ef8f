@testable import GPSDLocation
import Testing

/// The one ordered-delivery type, as a value: what the delegate, the async streams and the geofence monitor rely on.
@Suite("Deliveries in the order decided")
struct DeliveryQueueTests {
    @Test func oneThreadAtATimeClaimsTheQueueAndTakesWhatOthersQueueMeanwhile() {
        var queue = DeliveryQueue<Int>()
        var claims: [Bool] = []
        var batches: [[Int]?] = []
        claims.append(queue.claim())   // nothing to deliver
        queue.append(1)
        claims.append(queue.claim())
        claims.append(queue.claim())   // a second thread finds it claimed, and only queues
        queue.append(contentsOf: [2, 3])
        batches.append(queue.takeAll())
        queue.append(4)                // queued by another thread while the first delivers
        batches.append(queue.takeAll())
        let claimedWhileDelivering = queue.isClaimed
        batches.append(queue.takeAll())   // none left: the claim ends
        let claimedAfter = queue.isClaimed
        queue.append(5)
        claims.append(queue.claim())   // the next items go to whichever thread claims them
        #expect(claims == [false, true, false, true])
        #expect(batches == [[1, 2, 3], [4], nil])
        #expect(claimedWhileDelivering && !claimedAfter)
    }

    @Test func itemsPoppedOneAtATimeComeOldestFirst() {
        var queue = DeliveryQueue<String>()
        queue.append(contentsOf: ["a", "b"])
        let first = queue.popFirst()
        queue.append("c")
        let rest = queue.takeAll()   // what is left, from where popping stopped
        let none = queue.popFirst()
        #expect(first == "a" && rest == ["b", "c"] && none == nil && queue.isEmpty)
    }
}

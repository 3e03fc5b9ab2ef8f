import Dispatch
import GPSDLocation
import GPSDTestSupport

/// A ``LocationManager`` on a ``ScriptedSource`` and a ``ManualManagerClock``, with a recording delegate: every
/// event is sent on the test's thread, every timer runs in `advance(by:)`.
struct ManagerRig: Sendable {
    let source = ScriptedSource()
    let clock = ManualManagerClock()
    let manager: LocationManager
    let delegate = DelegateRecorder()

    /// A rig whose manager reconnects by `reconnect`: by default not at all, so that a failure ends the watch as
    /// the suites written for that expect. Its session lingers `linger` after the last one-shot request: by
    /// default not at all, so that a request's end closes it at once (``LingerTests`` test the linger).
    init(delegateQueue: DispatchQueue? = nil, reconnect: ReconnectPolicy = .never, linger: Duration = .zero) {
        manager = LocationManager(source: source, clock: clock, jitterSeed: 1, delegateQueue: delegateQueue)
        manager.reconnectPolicy = reconnect
        manager.sessionLinger = linger
        manager.delegate = delegate
    }
}

/// A suite on a ``ManagerRig``: its parts by name, and the helpers every such suite uses.
protocol ManagerTesting {
    var rig: ManagerRig { get }
}

extension ManagerTesting {
    var source: ScriptedSource { rig.source }
    var clock: ManualManagerClock { rig.clock }
    var manager: LocationManager { rig.manager }
    var delegate: DelegateRecorder { rig.delegate }

    /// Waits until every callback enqueued so far has run. Deliveries are enqueued synchronously by `send`.
    func drain() { manager.delegateQueue.sync {} }

    /// Fixes `seconds` apart in time, `metresPerSecond` apart along the equator.
    func fixes(_ seconds: ClosedRange<Int>, metresPerSecond: Double = 10) -> [Location] {
        seconds.map { Location.sample(second: $0, metresPerSecond: metresPerSecond) }
    }
}

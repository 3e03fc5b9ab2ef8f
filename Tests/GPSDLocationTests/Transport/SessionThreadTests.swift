import Dispatch
import Foundation
@testable import GPSDCore
import GPSDLocation
import GPSDSystem
import GPSDTestSupport
import Testing

/// A session's reader thread ends with it: when the session closes, when the manager stops, when the manager
/// goes. Checked against the kernel's list of this process's threads (`/proc/self/task`), with a loopback peer
/// that speaks like gpsd.
@Suite("Session threads", .timeLimit(.minutes(1)))
struct SessionThreadTests {
    /// A ``GPSDSessionSource`` that keeps every session it opens and reports their first event.
    private final class Tracking: LocationSource {
        let source: GPSDSessionSource
        private let state = Locked<(sessions: [ReaderThread], events: AsyncStream<Void>.Continuation?)>(([], nil))
        let firstEvents: AsyncStream<Void>

        init(server: GPSDServer) {
            source = GPSDSessionSource(server: server)
            let (stream, continuation) = AsyncStream.makeStream(of: Void.self)
            firstEvents = stream
            state.withLock { $0.events = continuation }
        }

        func openSession(_ handler: @escaping @Sendable ([SourceEvent]) -> Void) throws(LocationError) -> any SourceSession {
            let seen = Locked(false)
            let continuation = state.withLock { $0.events }
            let session = try source.openSession { events in
                let first = seen.withLock { seen in defer { seen = true }; return !seen }
                if first { continuation?.yield() }
                handler(events)
            }
            state.withLock { $0.sessions.append(session as! ReaderThread) }
            return session
        }

        /// The kernel ids of the threads of every session opened so far.
        var threadIDs: [Int32] { state.withLock { $0.sessions.compactMap(\.kernelThreadID) } }

        /// Whether every session opened so far has begun closing.
        var allClosing: Bool { state.withLock { $0.sessions.allSatisfy(\.isClosed) } }

        /// Whether the thread of every session opened so far has run to its end.
        var allFinished: Bool { state.withLock { $0.sessions.allSatisfy(\.hasFinished) } }
    }

    private static func threadExists(_ id: Int32) -> Bool { FileManager.default.fileExists(atPath: "/proc/self/task/\(id)") }

    /// Waits until the kernel has removed thread `id` from this process, which it does a moment after the thread
    /// ended (a join returns as the thread exits, before that): what "no thread of ours is left" means.
    private static func expectGone(_ id: Int32, sourceLocation: SourceLocation = #_sourceLocation) async {
        let giveUp = ContinuousClock.now + .seconds(10)   // a bound only a thread that never ends reaches
        while threadExists(id), ContinuousClock.now < giveUp { await Task.yield() }
        #expect(!threadExists(id), "thread \(id) is still there", sourceLocation: sourceLocation)
    }

    /// Waits for the first event of the next session (gpsd's greeting): its thread is running then.
    private func waitForFirstEvent(_ tracking: Tracking) async {
        var events = tracking.firstEvents.makeAsyncIterator()
        _ = await events.next()
    }

    @Test func closingASessionEndsItsThread() async throws {
        let gpsd = try FakeGPSD()
        let tracking = Tracking(server: gpsd.server)
        let session = try tracking.openSession { _ in }
        await waitForFirstEvent(tracking)
        let thread = try #require(tracking.threadIDs.first)
        #expect(Self.threadExists(thread))
        session.close()
        #expect(tracking.allFinished, "the reader thread was still running when close() returned")
        await Self.expectGone(thread)
        await gpsd.nextClient().waitForHangUp()
    }

    /// The thread is held inside its handler while another thread closes the session: only a join makes the
    /// thread gone by the time close() returns.
    @Test func closeWaitsForAThreadStillDeliveringAnEvent() async throws {
        let gpsd = try FakeGPSD()
        let tracking = Tracking(server: gpsd.server)
        let release = DispatchSemaphore(value: 0)
        let session = try tracking.openSession { _ in release.wait() }
        await waitForFirstEvent(tracking)
        let thread = try #require(tracking.threadIDs.first)
        let finished = await Self.finishedWhenReturning(tracking: tracking, release: release) { session.close() }
        #expect(finished, "close() returned before its thread ended")
        await Self.expectGone(thread)
    }

    /// Runs `stop` on a thread of its own while the session's thread is held in its handler, releases that
    /// once `stop` has begun closing the session, and tells whether the thread had run to its end when `stop`
    /// returned.
    private static func finishedWhenReturning(
        tracking: Tracking, release: DispatchSemaphore, _ stop: @escaping @Sendable () -> Void
    ) async -> Bool {
        let stopping = Task {
            await onThread {
                stop()
                return tracking.allFinished
            }
        }
        while !tracking.allClosing, !Task.isCancelled { await Task.yield() }   // the stop has begun (or the time limit came)
        release.signal()
        return await stopping.value
    }

    @Test func stopUpdatingLocationWaitsForTheReaderThreadToEnd() async throws {
        let gpsd = try FakeGPSD()
        let tracking = Tracking(server: gpsd.server)
        let manager = LocationManager(source: tracking)
        let release = DispatchSemaphore(value: 0)
        _ = manager.addObserver { observation in   // holds the reader thread in the SKY report
            if case .satellites = observation { release.wait() }
        }
        manager.startUpdatingLocation()
        await waitForFirstEvent(tracking)
        let thread = try #require(tracking.threadIDs.first)
        await gpsd.nextClient().send(#"{"class":"SKY","satellites":[]}"#)
        let finished = await Self.finishedWhenReturning(tracking: tracking, release: release) {
            manager.stopUpdatingLocation()
        }
        #expect(finished, "stopUpdatingLocation() returned before the reader thread ended")
        await Self.expectGone(thread)
    }

    /// A host name lookup cannot be interrupted: a session closed during one does not wait for it, and its
    /// thread ends by itself once the lookup returns.
    @Test func closeDoesNotWaitForAnUninterruptibleCall() async throws {
        let (inside, release) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        let afterwards = Locked<Bool?>(nil)
        let reader = try ReaderThread.start(name: "lookup", resources: .system) { reader in
            _ = reader.uninterruptible {
                inside.signal()
                release.wait()   // a lookup that takes as long as the test wants
            }
            afterwards.withLock { $0 = reader.isClosed }
        }
        await onThread { inside.wait() }
        let thread = try #require(reader.kernelThreadID)
        await onThread { reader.close() }   // returns although the call still runs
        #expect(!reader.hasFinished, "the thread still looks the name up")
        release.signal()
        await Self.expectGone(thread)   // and ends by itself once it returns
        #expect(afterwards.withLock { $0 } == true, "it saw it was closed")
    }

    @Test func aSessionClosedBeforeItsUninterruptibleCallSkipsIt() throws {
        let ran = Locked(false)
        let done = DispatchSemaphore(value: 0)
        let reader = try ReaderThread.start(name: "lookup", resources: .system) { reader in
            while !reader.isClosed { _ = try? reader.wake.wait(for: nil, timeout: nil) }
            _ = reader.uninterruptible { ran.withLock { $0 = true } }
            done.signal()
        }
        reader.close()
        done.wait()
        #expect(!ran.withLock { $0 })
    }

    @Test func stopUpdatingLocationLeavesNoThreadOfOurs() async throws {
        let gpsd = try FakeGPSD()
        let tracking = Tracking(server: gpsd.server)
        let manager = LocationManager(source: tracking)
        manager.startUpdatingLocation()
        await waitForFirstEvent(tracking)
        let thread = try #require(tracking.threadIDs.first)
        manager.stopUpdatingLocation()
        #expect(tracking.allFinished, "the reader thread outlived stopUpdatingLocation()")
        await Self.expectGone(thread)
    }

    @Test func releasingTheManagerLeavesNoThreadOfOurs() async throws {
        let gpsd = try FakeGPSD()
        let tracking = Tracking(server: gpsd.server)
        var manager: LocationManager? = LocationManager(source: tracking)
        manager?.startUpdatingLocation()
        await waitForFirstEvent(tracking)
        let thread = try #require(tracking.threadIDs.first)
        // The last reference may be the reader thread's own, held while it delivers an event: then the manager
        // goes when that returns, and the thread ends right after. Either way it ends, by itself.
        manager = nil
        await Self.expectGone(thread)
        #expect(tracking.allFinished, "the reader thread outlived its manager")
    }

    /// With gpsd gone, each attempt's thread fails and closes its own session, which cannot wait for itself: a
    /// stop during the backoff waits for that thread.
    @Test func stopWhileReconnectingLeavesNoThreadOfOurs() async throws {
        for round in 0..<20 {
            let tracking = Tracking(server: GPSDServer(host: "127.0.0.1", port: freeLoopbackPort()))
            let manager = LocationManager(source: tracking)
            manager.reconnectPolicy = ReconnectPolicy(initialDelay: .seconds(60), jitter: 0)   // stopped before the next
            manager.startUpdatingLocation()
            await waitForFirstEvent(tracking)   // connection refused
            while !Task.isCancelled {   // (the suite's time limit ends a wait that never ends)
                if case .reconnecting = manager.status { break }
                await Task.yield()
            }
            manager.stopUpdatingLocation()
            try Task.checkCancellation()
            #expect(tracking.allFinished, "round \(round): the failed session's thread outlived stopUpdatingLocation()")
        }
    }

    @Test func stoppingTheAsyncManagerLeavesNoThreadOfOurs() async throws {
        let gpsd = try FakeGPSD()
        let tracking = Tracking(server: gpsd.server)
        let gps = AsyncLocationManager(manager: LocationManager(source: tracking))
        let updates = gps.updates()
        await waitForFirstEvent(tracking)
        let thread = try #require(tracking.threadIDs.first)
        await gps.stop()
        #expect(tracking.allFinished, "the reader thread outlived stop()")
        await Self.expectGone(thread)
        for try await _ in updates { Issue.record("no fix was sent") }
    }

    @Test func theWatchAsksForJSONAndTheChosenDevice() async throws {
        let gpsd = try FakeGPSD()
        let manager = LocationManager(
            source: GPSDSessionSource(server: GPSDServer(host: "127.0.0.1", port: gpsd.port, device: "/dev/tty\"S0")))
        manager.startUpdatingLocation()
        let client = await gpsd.nextClient()
        await client.waitUntilReceived { $0.contains("\n") }
        #expect(client.received == #"?WATCH={"enable":true,"json":true,"device":"/dev/tty\"S0"};"# + "\n")
        manager.stopUpdatingLocation()
    }

    // MARK: Resources the system refuses

    @Test func aRefusedPipeFailsTheDelegateWithResourceUnavailable() async throws {
        let source = GPSDSessionSource(server: .default, resources: .refusingPipes(EMFILE))
        let manager = LocationManager(source: source)
        let (events, continuation) = AsyncStream.makeStream(of: DelegateEvent.self)
        let delegate = DelegateRecorder { _, event in continuation.yield(event) }
        manager.delegate = delegate
        manager.startUpdatingLocation()
        var iterator = events.makeAsyncIterator()
        let event = await iterator.next()
        guard case .failure(let error) = event else {
            Issue.record("expected a failure, got \(String(describing: event))")
            return
        }
        #expect(error.code == .resourceUnavailable)
        #expect(error.errorNumber == EMFILE)
        #expect(error.message.contains("pipe2"), "\(error.message)")
    }

    @Test func aRefusedPipeIsThrownByARequest() async throws {
        let gps = AsyncLocationManager(
            manager: LocationManager(source: GPSDSessionSource(server: .default, resources: .refusingPipes(EMFILE))))
        // A timeout far beyond the failure, so a slow machine cannot turn it into timedOut.
        let error = await #expect(throws: LocationError.self) { try await gps.requestLocation(timeout: .seconds(30)) }
        #expect(error?.code == .resourceUnavailable)
        #expect(error?.errorNumber == EMFILE)
    }
}

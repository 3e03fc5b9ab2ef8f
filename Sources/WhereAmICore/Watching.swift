import GPSDLocation
import Logging
import ProcessEnd
import UnixSignals

extension WhereAmI {
    /// What ends or changes a watch; the loop in ``watch(from:source:)`` decides what each means.
    private enum WatchEvent: Sendable {
        /// The screen: a key to quit, or a terminal that cannot be written.
        case screen(WatchScreen.Event)
        /// SIGINT, SIGTERM or SIGHUP.
        case signal
        /// SIGWINCH: the terminal's size changed.
        case resized
        /// SIGCONT: the process was stopped, and the shell may have changed the terminal meanwhile.
        case continued
        /// The fixes ended: a fatal failure (the error), or the end of a recording.
        case ended(LocationError?)
    }

    /// --watch: a live panel of the receiver on the terminal (``WatchPanel``, drawn by ``WatchScreen``) until `q`,
    /// Ctrl-C, SIGINT, SIGTERM or SIGHUP, or a fatal failure; the terminal is restored before this returns or
    /// throws. At the end of a recording the panel stays, and says so, until one of those.
    ///
    /// A signal ends it within a second even while the terminal takes nothing (``EndRequest``); a crash puts the
    /// terminal back before the process ends (``CrashSignals``).
    func watch(from gps: AsyncLocationManager, source: String) async throws {
        let end = try EndRequest.catching(program: "whereami")
        try CrashSignals.restoreTheTerminal()
        let signals = await UnixSignalsSequence(trapping: .sigwinch, .sigcont)
        let (events, sink) = AsyncStream.makeStream(of: WatchEvent.self)
        let screen = try WatchScreen(panel: WatchPanel(source: source, now: .now)) { sink.yield(.screen($0)) }
        // What the library logs goes to the panel meanwhile, then to standard error once the terminal is back.
        let logger = gps.manager.logger, logged = WatchLog()
        var onPanel = logger
        onPanel.handler = WatchLogHandler(for: logger, screen: screen, keeping: logged)
        gps.manager.logger = onPanel
        defer {
            gps.manager.logger = logger
            logged.replay(to: logger)
        }
        // Made before anything starts, so that no change is missed.
        let changes = gps.statusUpdates()
        let fixes = gps.updates()
        let skies = gps.satelliteUpdates()
        let headings = gps.headingUpdates(filter: nil, bufferingPolicy: .bufferingNewest(1))
        try screen.start()

        var failure: (any Error)?
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await change in changes { screen.update { $0.status = change } }
            }
            group.addTask {
                do {
                    for try await fix in fixes { screen.update { $0.location = fix } }
                    sink.yield(.ended(nil))
                } catch {
                    sink.yield(.ended(error as? LocationError ?? LocationError(.connectionLost, "\(error)")))
                }
            }
            group.addTask { await Self.feedSatellites(skies, to: screen) }
            group.addTask {
                // A heading's failure is the fixes' failure, which their task reports.
                do { for try await heading in headings { screen.update { $0.heading = heading } } } catch {}
            }
            group.addTask {
                for await signal in signals { sink.yield(signal == .sigwinch ? .resized : .continued) }
            }
            group.addTask {
                for await _ in end.signals {
                    sink.yield(.signal)
                    return
                }
            }
            loop: for await event in events {
                switch event {
                case .resized: screen.resized()
                case .continued: screen.continued()
                case .signal, .screen(.quit): break loop
                case .screen(.failed(let error)):
                    failure = error
                    break loop
                case .ended(nil): screen.update { $0.ended = true }
                case .ended(let error?):
                    failure = error
                    break loop
                }
            }
            group.cancelAll()
            sink.finish()
        }
        let lost = await screen.close()
        if let failure { throw failure }
        if let lost, lost.abandoned { throw lost }
    }

    /// The satellites of each sky report, onto the panel: its table, its sky plot, the counts and the DOPs.
    static func feedSatellites(_ skies: SatelliteUpdates, to screen: WatchScreen) async {
        for await sky in skies {
            screen.update { $0.sky = sky }
        }
    }
}

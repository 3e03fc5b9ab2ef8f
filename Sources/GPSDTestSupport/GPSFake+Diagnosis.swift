import Foundation

extension GPSFake {
    /// For a failure message, gathered off the cooperative pool: whether gpsfake still runs, the end of its
    /// stderr, and what a fresh client (`gpspipe -w`) gets from this gpsd within 3 s, so that a failure shows
    /// whether gpsd delivered fixes at all.
    package func diagnosis() async -> String {
        let server = server
        let sample = try? await CLIProcess.start(["-w", "-n", "8", server], executable: URL(fileURLWithPath: "/usr/bin/gpspipe"))
            .finish(deadline: .seconds(3))
        return "--- gpsfake running: \(isRunning); its stderr:\n\(standardError.suffix(1500))\n"
            + "--- gpspipe -w \(server): \(sample.map { "\($0.stdout.prefix(3000))" } ?? "not run")"
    }

    /// How many POLL replies with a fix in them gpsd logged sending: it logs its clients' traffic to
    /// ``standardError`` when run with `waitForClient`.
    package var pollRepliesWithFix: Int {
        standardError.split(separator: "\n").count { $0.contains(#"{"class":"POLL""#) && $0.contains(#""tpv":[{"#) }
    }
}

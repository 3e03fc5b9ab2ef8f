import Foundation
import GPSDTestSupport
import Testing

extension WhereAmIProcessTests {
    /// `whereami` pointed at a web server instead of gpsd (Python's http.server, as the evidence ran it): it takes
    /// the watch, a line of one word, for an HTTP/0.9 request, answers it with its "400 Bad request" page alone
    /// (`<!DOCTYPE HTML>` first) and hangs up. whereami says the server is not gpsd and what it answered, at once,
    /// in every mode that waits for gpsd, and exits 69 (EX_UNAVAILABLE).
    @Suite("whereami against a server that is not gpsd", .timeLimit(.minutes(1)))
    struct NotGPSDTests {
        /// Runs Python's http.server on 127.0.0.1 at a port it chooses, and `body` with its address.
        private func withWebServer<T>(_ body: (String) async throws -> T) async throws -> T {
            let python = URL(fileURLWithPath: "/usr/bin/python3")
            let web = try await CLIProcess.start(["-u", "-m", "http.server", "0", "--bind", "127.0.0.1"], executable: python)
            defer { web.terminate() }
            let serving = await web.waitForOutput(timeout: .seconds(20)) { $0.contains("Serving HTTP on 127.0.0.1 port ") }
            let port = try #require(
                serving ? web.stdoutSoFar.firstMatch(of: /Serving HTTP on 127\.0\.0\.1 port (\d+)/).map { String($0.1) } : nil,
                "http.server started: \(web.stdoutSoFar) \(web.stderrSoFar)")
            let result = try await body("127.0.0.1:\(port)")
            web.terminate()
            _ = await web.finish(deadline: .seconds(10))
            return result
        }

        @Test("exit 69, saying the server is not gpsd and what it answered", arguments: [
            [], ["--follow", "--format", "json"], ["--sky"], ["-q"],
        ])
        func exitsUnavailable(options: [String]) async throws {
            let (server, result) = try await withWebServer { server in (server, try await whereami(options + [server])) }
            #expect(result.status == 69 && !result.endedBySignal, "\(result)")
            #expect(result.stderr.contains("\(server) is not gpsd: it answered '<!DOCTYPE HTML>'"), "\(result.stderr)")
            #expect(!result.stderr.contains("reconnecting"), "no second attempt: \(result.stderr)")
            #expect(!result.stderr.contains("no fix in") && !result.stderr.contains("no fix within"),
                    "not after a timeout: \(result.stderr)")
            if options.contains("-q") {
                #expect(result.stderr.split(separator: "\n").count == 1, "only the error: \(result.stderr)")
            }
        }
    }
}

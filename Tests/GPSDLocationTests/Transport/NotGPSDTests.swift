import Foundation
import GPSDCore
import GPSDLocation
import GPSDTestSupport
import Testing

/// A server at gpsd's address that is not gpsd, on loopback through the real socket and reader thread: one whose
/// first line is not gpsd's JSON is named as such, and the watch ends; one that says nothing, or hangs up before
/// greeting, has not connected, and is retried.
@Suite("A server that is not gpsd", .timeLimit(.minutes(1)))
struct NotGPSDTests {
    /// What a web server answers gpsd's `?WATCH` with (one of HTTP/1.x; Python's http.server takes the line for an
    /// HTTP/0.9 request and sends its error page alone), before it closes the connection.
    static let badRequest = [
        "HTTP/1.0 400 Bad request syntax ('?WATCH={\"enable\":true,\"json\":true};')", "Server: SimpleHTTP/0.6",
        "Content-Type: text/html;charset=utf-8", "", "<!DOCTYPE HTML>",
    ]

    /// A manager of `server` that retries at once, with `connectTimeout` for the connection and the greeting.
    private static func manager(_ server: GPSDServer, connectTimeout: Duration = .seconds(30)) -> AsyncLocationManager {
        let manager = LocationManager(source: GPSDSessionSource(server: server, connectTimeout: connectTimeout))
        manager.reconnectPolicy = ReconnectPolicy(initialDelay: .milliseconds(20), maximumDelay: .milliseconds(40))
        return AsyncLocationManager(manager: manager)
    }

    /// Answers the first client's watch as a web server does, then hangs up.
    private static func answerLikeAWebServer(_ server: FakeGPSD) async {
        let client = await server.nextClient()
        await client.waitUntilReceived { $0.contains("?WATCH=") }
        for line in badRequest { client.send(line) }
        client.close()
    }

    @Test("a web server: one fix fails with notGPSD, quoting its answer, long before the request's timeout could")
    func aWebServerFailsARequest() async throws {
        let web = try FakeGPSD(greeting: [])
        let gps = Self.manager(web.server)
        async let answered: Void = Self.answerLikeAWebServer(web)
        let error = await #expect(throws: LocationError.self) {
            try await gps.requestLocation(timeout: AsyncLocationManager.noTimeout)
        }
        await answered
        #expect(error?.code == .notGPSD, "\(String(describing: error))")
        #expect(error?.code.isTransient == false)
        #expect(error?.message.hasPrefix("the server at \(web.server) is not gpsd: it answered 'HTTP/1.0 400 Bad request syntax") == true,
                "\(String(describing: error))")
        await gps.stop()
    }

    @Test("a web server: a stream ends with notGPSD, and the watch stops instead of reconnecting")
    func aWebServerEndsAStream() async throws {
        let web = try FakeGPSD(greeting: [])
        let gps = Self.manager(web.server)
        let statuses = gps.statusUpdates()
        let updates = gps.updates()
        await Self.answerLikeAWebServer(web)
        let error = await #expect(throws: LocationError.self) { for try await _ in updates {} }
        #expect(error?.code == .notGPSD, "\(String(describing: error))")
        var seen: [LocationStatus] = []
        for await status in statuses {
            seen.append(status)
            if status == .stopped, seen.count > 1 { break }
        }
        #expect(!seen.contains { $0.name == "reconnecting" || $0.name == "connected" }, "\(seen)")
        #expect(gps.manager.status == .stopped)
        #expect(web.clientCount == 1, "no second attempt")
        await gps.stop()
    }

    @Test("a receiver's NMEA on a TCP port, sent without being asked, is not gpsd")
    func nmeaIsNotGPSD() async throws {
        let nmea = try FakeGPSD(greeting: [NMEA.rmc(time: NMEA.Track.time(0), latitude: 52.5, longitude: 13.4)])
        let gps = Self.manager(nmea.server)
        let error = await #expect(throws: LocationError.self) { try await gps.requestLocation(timeout: .seconds(30)) }
        #expect(error?.code == .notGPSD)
        #expect(error?.message.contains("it answered '$GPRMC,120000.00,A,") == true, "\(String(describing: error))")
        await gps.stop()
    }

    /// (A stream keeps trying: FaultInjectionTests.)
    @Test("a server that accepts and says nothing has not connected: one fix fails after the connect timeout, naming it")
    func aSilentServer() async throws {
        let silent = try FakeGPSD(greeting: [])
        let request = Self.manager(silent.server, connectTimeout: .milliseconds(200))
        let error = await #expect(throws: LocationError.self) { try await request.requestLocation(timeout: .seconds(30)) }
        #expect(error?.code == .gpsdUnavailable, "retried, as a gpsd stopped may answer again")
        #expect(error?.errorNumber == ETIMEDOUT)
        #expect(error?.message == "the server at \(silent.server) sent no greeting within 0.2 s of connecting: it is not gpsd, "
                + "or gpsd is not answering", "\(String(describing: error))")
        await request.stop()
    }

    @Test("a server that hangs up before greeting: one fix fails at once with gpsdUnavailable, saying so")
    func aServerThatHangsUp() async throws {
        let server = try FakeGPSD(greeting: [])
        let gps = Self.manager(server.server)
        async let hungUp: Void = Self.hangUp(on: server)
        let error = await #expect(throws: LocationError.self) { try await gps.requestLocation(timeout: AsyncLocationManager.noTimeout) }
        await hungUp
        #expect(error?.code == .gpsdUnavailable)
        #expect(error?.message.contains("closed the connection without greeting as gpsd does") == true, "\(String(describing: error))")
        await gps.stop()
    }

    private static func hangUp(on server: FakeGPSD) async {
        await server.nextClient().close()
    }

    @Test("gpsd's greeting, and what came with it, reach the manager: the status names gpsd's release, the fix arrives")
    func theGreetingIsRead() async throws {
        let gpsd = try FakeGPSD(greeting: [])
        let gps = Self.manager(gpsd.server)
        let statuses = gps.statusUpdates()
        async let fix = gps.requestLocation(timeout: AsyncLocationManager.noTimeout)
        let client = await gpsd.nextClient()
        await client.waitUntilReceived { $0.contains("?WATCH=") }
        client.sendRaw(Array((FakeGPSD.versionLine + "\n" + ReportLines.tpv(second: 3) + "\n").utf8))
        #expect(try await fix.timestamp == GPSDTime.date(from: ReportLines.time(3)))
        var seen: [LocationStatus] = []
        for await status in statuses {
            seen.append(status)
            if status.name == "fix" { break }
        }
        #expect(seen.contains(.connected(gpsdVersion: "3.22")), "\(seen)")
        await gps.stop()
    }
}

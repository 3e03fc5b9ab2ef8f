import GPSDLocation
import Testing

@Suite("GPSDServer parsing")
struct GPSDServerTests {
    // MARK: Accepted forms

    @Test func defaultServerIsLocalhostOnGPSDPort() {
        #expect(GPSDServer.defaultPort == 2947)
        #expect(GPSDServer.default == GPSDServer(host: "localhost", port: 2947, device: nil))
        #expect(GPSDServer().description == "localhost:2947")
    }

    @Test(arguments: [
        ("localhost", GPSDServer(host: "localhost", port: 2947)),
        ("rover.lan", GPSDServer(host: "rover.lan", port: 2947)),
        ("192.168.1.7", GPSDServer(host: "192.168.1.7", port: 2947)),
        (":2948", GPSDServer(host: "localhost", port: 2948)),
        ("host:2948", GPSDServer(host: "host", port: 2948)),
        ("host:1", GPSDServer(host: "host", port: 1)),
        ("host:65535", GPSDServer(host: "host", port: 65535)),
        ("host:2948:/dev/ttyUSB0", GPSDServer(host: "host", port: 2948, device: "/dev/ttyUSB0")),
        ("host::/dev/ttyACM0", GPSDServer(host: "host", port: 2947, device: "/dev/ttyACM0")),
        ("::/dev/ttyACM0", GPSDServer(host: "localhost", port: 2947, device: "/dev/ttyACM0")),
        ("[::1]", GPSDServer(host: "::1", port: 2947)),
        ("[::1]:2948", GPSDServer(host: "::1", port: 2948)),
        ("[fe80::1]:2948:/dev/gps0", GPSDServer(host: "fe80::1", port: 2948, device: "/dev/gps0")),
        ("[2001:db8::7]::/dev/gps1", GPSDServer(host: "2001:db8::7", port: 2947, device: "/dev/gps1")),
        ("[fe80::1%eth0]:2948", GPSDServer(host: "fe80::1%eth0", port: 2948)),
        ("rover:2947:tcp://10.0.0.2:4001", GPSDServer(host: "rover", port: 2947, device: "tcp://10.0.0.2:4001")),
        ("rover::udp://:5000", GPSDServer(host: "rover", port: 2947, device: "udp://:5000")),
    ])
    func parses(text: String, expected: GPSDServer) throws {
        let server = try GPSDServer(parsing: text)
        #expect(server == expected)
        #expect(server.host == expected.host)
        #expect(server.port == expected.port)
        #expect(server.device == expected.device)
    }

    // MARK: Errors

    /// Parses `text`, which must fail, and returns the error.
    private func parseError(_ text: String) throws -> GPSDServer.ParseError {
        let error = try #require(throws: GPSDServer.ParseError.self) { try GPSDServer(parsing: text) }
        #expect(error.input == text)
        #expect(error.description.hasPrefix("invalid gpsd server '\(text)': "))
        return error
    }

    @Test func emptyStringIsRejected() throws {
        let error = try parseError("")
        #expect(error.reason.contains("empty"))
    }

    @Test func unclosedBracketIsRejected() throws {
        let error = try parseError("[::1")
        #expect(error.reason.contains("]"))
        #expect(error.reason.contains("missing"))
    }

    @Test func emptyBracketsAreRejected() throws {
        let error = try parseError("[]:2947")
        #expect(error.reason.contains("no address"))
    }

    @Test("a host that begins with '[' is written in brackets (found by Scripts/fuzz server: \"[[]\" is host \"[\")")
    func hostBeginningWithABracket() throws {
        let odd = try GPSDServer(parsing: "[[]")
        #expect(odd == GPSDServer(host: "["))
        #expect(odd.description == "[[]:2947")
        #expect(try GPSDServer(parsing: odd.description) == odd)
        #expect(try GPSDServer(parsing: GPSDServer(host: "[x").description) == GPSDServer(host: "[x"))
    }

    @Test func textAfterClosingBracketMustBeAColon() throws {
        let error = try parseError("[::1]2947")
        #expect(error.reason.contains("':' after ']'"))
    }

    @Test(arguments: ["0", "70000", "65536", "abc", "-1", "29 47"])
    func invalidPortIsRejected(port: String) throws {
        let error = try parseError("host:\(port)")
        #expect(error.reason.contains("'\(port)'"))
        #expect(error.reason.contains("not a port from 1 to 65535"))
        // A plain bad port on a plain host is not an IPv6 problem.
        #expect(!error.reason.contains("bracket"))
    }

    @Test func invalidPortAfterBracketedHostIsRejected() throws {
        let error = try parseError("[::1]:0")
        #expect(error.reason.contains("'0' is not a port"))
    }

    @Test func unbracketedIPv6WithHexGroupsHintsAtBrackets() throws {
        let error = try parseError("2001:db8::1")
        #expect(error.reason.contains("brackets"))
        #expect(error.reason.contains("[::1]"))
    }

    /// The documented contract: "an IPv6 address without brackets" throws, with a hint to use brackets.
    @Test func bareLinkLocalIPv6IsRejectedWithBracketHint() throws {
        let error = try #require(throws: GPSDServer.ParseError.self) { try GPSDServer(parsing: "fe80::1") }
        #expect(error.reason.contains("brackets"))
    }

    @Test func bareLoopbackIPv6IsRejectedWithBracketHint() throws {
        let error = try #require(throws: GPSDServer.ParseError.self) { try GPSDServer(parsing: "::1") }
        #expect(error.reason.contains("brackets"))
    }

    @Test func emptyDeviceIsRejected() throws {
        let error = try parseError("host:2947:")
        #expect(error.reason.contains("device"))
        #expect(error.reason.contains("empty"))
    }

    @Test func emptyDeviceAfterBracketedHostIsRejected() throws {
        let error = try parseError("[::1]:2947:")
        #expect(error.reason.contains("device"))
    }

    /// A ':' says that something follows it: `whereami :::` was localhost:2947 with device ":".
    @Test("a ':' with nothing after it, or a device that begins with ':', is refused", arguments: [
        (":::", "the device ':' begins with ':'"),
        ("::::", "the device '::' begins with ':'"),
        ("rover:2947::x", "the device ':x' begins with ':'"),
        ("[::1]:2947::", "the device ':' begins with ':'"),
        (":", "the port after ':' is empty"),
        ("rover:", "the port after ':' is empty"),
        ("[::1]:", "the port after ':' is empty"),
        ("[fe80::1%eth0]:", "the port after ':' is empty"),
    ])
    func aDanglingColonIsRefused(text: String, reason: String) throws {
        let error = try parseError(text)
        #expect(error.reason.hasPrefix(reason), "\(error)")
    }

    @Test func aDeviceThatBeginsWithAColonHintsAtTheForm() throws {
        let error = try parseError(":::")
        #expect(error.reason.contains("host[:port[:device]]"))
        #expect(error.reason.contains("[::1]:2947"))
    }

    @Test func aBareIPv6AddressWithAZoneHintsAtBrackets() throws {
        let error = try parseError("fe80::1%eth0")
        #expect(error.reason.contains("brackets"), "not host fe80 with device 1%eth0: \(error)")
    }

    // MARK: Description

    @Test(arguments: [
        GPSDServer.default,
        GPSDServer(host: "rover.lan", port: 2948),
        GPSDServer(host: "10.0.0.2", port: 1, device: "/dev/ttyUSB0"),
        GPSDServer(host: "::1", port: 2947),
        GPSDServer(host: "fe80::1", port: 2948, device: "/dev/gps0"),
        GPSDServer(host: "2001:db8::7", port: 65535, device: "/dev/serial/by-id/usb-u-blox:if00"),
        // Found by Scripts/fuzz server: "2947:::" was host 2947, device ":", and "2947:2947::" is an IPv6 address.
        // Such a device is refused now; a host, port and device can still read as one IPv6 address.
        GPSDServer(host: "1", port: 2, device: "3:4:5:6:7:8"),
        GPSDServer(host: "fe80", port: 1, device: "1%eth0"),
        // And: "\u{602}" (a prepended mark) joins the ':' after it into one Character.
        GPSDServer(host: "\u{602}", port: 2947), GPSDServer(host: "a\u{602}", port: 2948, device: "\u{602}:x"),
        // And ":\u{6EA}" and "[\u{301}": a ':' or '[' with a combining mark is one Character, and not ':' or '['.
        GPSDServer(host: ":\u{6EA}", port: 2947), GPSDServer(host: "[\u{301}x", port: 2947),
    ])
    func descriptionRoundTrips(server: GPSDServer) throws {
        #expect(try GPSDServer(parsing: server.description) == server)
    }

    @Test("a device that begins with ':' has no text that reads back: parsing refuses its description")
    func aDeviceThatBeginsWithAColonDoesNotReadBack() throws {
        let server = GPSDServer(host: "2947", port: 2947, device: ":")
        #expect(throws: GPSDServer.ParseError.self) { try GPSDServer(parsing: server.description) }
    }

    @Test func descriptionBracketsIPv6Hosts() {
        #expect(GPSDServer(host: "::1", port: 2948).description == "[::1]:2948")
        #expect(GPSDServer(host: "fe80::1", port: 2948, device: "/dev/gps0").description == "[fe80::1]:2948:/dev/gps0")
        #expect(GPSDServer(host: "rover", port: 2947, device: "/dev/ttyACM0").description == "rover:2947:/dev/ttyACM0")
        #expect(GPSDServer(host: "2947", port: 2947, device: ":").description == "[2947]:2947::", "reads as IPv6 unbracketed")
        #expect(GPSDServer(host: "1", port: 2, device: "3:4:5:6:7:8").description == "[1]:2:3:4:5:6:7:8")
    }
}

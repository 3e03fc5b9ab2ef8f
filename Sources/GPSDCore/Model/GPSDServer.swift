import Glibc

/// Where gpsd listens, and optionally which of its receivers to watch.
///
/// Accepts the `host[:port[:device]]` form that gpsd's own clients (`gpspipe`, `cgps`) take. An IPv6
/// address goes in brackets. An empty host or port keeps its default (`:2948`, `rover::/dev/ttyACM0`), but a
/// `:` says that something follows it: `rover:` and `[::1]:` are refused, as is a device that begins with
/// `:` (`:::` would be localhost with device `:`).
///
/// ```swift
/// let local = GPSDServer.default                                  // localhost:2947
/// let rover = try GPSDServer(parsing: "rover.lan:2947:/dev/ttyACM0")
/// let v6 = try GPSDServer(parsing: "[::1]:2948")
/// ```
public struct GPSDServer: Sendable, Hashable, CustomStringConvertible {
    /// gpsd's registered port.
    public static let defaultPort: UInt16 = 2947
    /// How long a connection to gpsd may take before the attempt counts as failed, unless told otherwise:
    /// 5 seconds (``LocationManager/defaultConnectTimeout``).
    package static let defaultConnectTimeout: Duration = .seconds(5)

    /// `localhost:2947`, all receivers.
    public static let `default` = GPSDServer()

    /// A host name or an IP address (IPv6 without brackets).
    public var host: String
    /// The TCP port.
    public var port: UInt16
    /// The receiver's device path as gpsd knows it (`/dev/ttyUSB0`); `nil` watches every receiver.
    /// A device selects it through gpsd's `?WATCH` `device` field.
    public var device: String?

    /// A server from its parts: `GPSDServer(host: "10.0.0.7", port: 2947, device: "/dev/ttyACM0")`.
    public init(host: String = "localhost", port: UInt16 = GPSDServer.defaultPort, device: String? = nil) {
        self.host = host
        self.port = port
        self.device = device
    }

    /// Parses `host[:port[:device]]`.
    ///
    /// - Throws: ``ParseError`` saying what is wrong, for an empty string, an unclosed bracket, a `:` with
    ///   nothing after it, a port that is not a number from 1 to 65535, a device that begins with `:`, or an IPv6
    ///   address without brackets.
    public init(parsing text: String) throws(ParseError) {
        // Split by scalars, not Characters: a character such as U+0602 (a prepended mark) joins the ':' after it
        // into one Character, and "؂:2947" would not split (found by Scripts/fuzz server).
        var rest = Substring(text).unicodeScalars
        var host = "localhost"
        guard !text.isEmpty else { throw ParseError(input: text, reason: "the server is empty") }

        if rest.first == "[" {
            guard let close = rest.firstIndex(of: "]") else {
                throw ParseError(input: text, reason: "an IPv6 address in brackets is missing its ']'")
            }
            host = String(Substring(rest[rest.index(after: rest.startIndex)..<close]))
            guard !host.isEmpty else { throw ParseError(input: text, reason: "the brackets hold no address") }
            rest = rest[rest.index(after: close)...]
            if !rest.isEmpty, rest.first != ":" {
                throw ParseError(input: text, reason: "expected ':' after ']'")
            }
        } else {
            if Self.isIPv6Address(text) {
                throw ParseError(input: text, reason: "an IPv6 address goes in brackets, as in [::1]:2947 or [\(text)]")
            }
            let hostPart = rest.prefix { $0 != ":" }
            if !hostPart.isEmpty { host = String(Substring(hostPart)) }
            rest = rest[hostPart.endIndex...]
        }
        if rest.first == ":" {
            rest = rest.dropFirst()
            // `rover:` and `[::1]:` promise a port and give none (as `rover:2947:` promises a device).
            guard !rest.isEmpty else {
                throw ParseError(input: text, reason: "the port after ':' is empty (leave the ':' out for port \(Self.defaultPort))")
            }
        }

        var port = Self.defaultPort
        let portScalars = rest.prefix { $0 != ":" }
        let portPart = String(Substring(portScalars))
        if !portPart.isEmpty {
            guard let value = UInt16(portPart), value > 0 else {
                let hint = host.contains(":") || portPart.contains(where: \.isHexDigit) && rest.contains(":")
                    ? " (write an IPv6 address in brackets: [::1]:2947)" : ""
                throw ParseError(input: text, reason: "'\(portPart)' is not a port from 1 to 65535\(hint)")
            }
            port = value
        }
        rest = rest[portScalars.endIndex...]

        var device: String?
        if rest.first == ":" {
            let devicePart = rest.dropFirst()
            guard !devicePart.isEmpty else { throw ParseError(input: text, reason: "the device after ':' is empty") }
            // gpsd names a device by a path or a URL (`/dev/ttyUSB0`, `tcp://10.0.0.2:4001`); one that begins with
            // ':' is a ':' too many (`:::`, `rover:2947::x`), or an IPv6 address that wants brackets.
            guard devicePart.first != ":" else {
                throw ParseError(input: text, reason: "the device '\(String(Substring(devicePart)))' begins with ':' "
                                 + "(the form is host[:port[:device]], an IPv6 address in brackets: [::1]:2947)")
            }
            device = String(Substring(devicePart))
        }
        self.init(host: host, port: port, device: device)
    }

    /// Whether `text` is an IPv6 address, with or without a zone (`fe80::1%eth0`, which getaddrinfo takes in
    /// brackets).
    private static func isIPv6Address(_ text: String) -> Bool {
        var address = in6_addr()
        let scalars = text.unicodeScalars
        let address6 = scalars.firstIndex(of: "%").map { String(Substring(scalars[..<$0])) } ?? text
        return inet_pton(AF_INET6, address6, &address) == 1
    }

    /// `host:port[:device]`, with an IPv6 host in brackets; ``init(parsing:)`` reads it back, unless the device
    /// begins with `:` (which it refuses). So are a host that begins with `[`, and one whose text with the rest
    /// would read as an IPv6 address (host `1`, port 2, device `3:4:5:6:7:8` is `[1]:2:3:4:5:6:7:8`, not
    /// `1:2:3:4:5:6:7:8`).
    public var description: String {
        let rest = ":\(port)" + (device.map { ":\($0)" } ?? "")
        // By scalars: a ':' or '[' that a combining mark follows is no Character ':' or '[' (found by Scripts/fuzz
        // server: host ":\u{6EA}").
        let scalars = host.unicodeScalars
        guard scalars.contains(":") || scalars.first == "[" || Self.isIPv6Address(host + rest) else { return host + rest }
        return "[\(host)]" + rest
    }

    /// Why a server string could not be parsed.
    public struct ParseError: Error, Hashable, CustomStringConvertible {
        /// The text that was parsed.
        public var input: String
        /// What is wrong with it, in words.
        public var reason: String

        /// `invalid gpsd server 'host:99999': '99999' is not a port from 1 to 65535`.
        public var description: String { "invalid gpsd server '\(input)': \(reason)" }
    }
}

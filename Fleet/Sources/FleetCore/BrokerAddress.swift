import FoundationEssentials

/// Where an MQTT broker is, and how to log in: `mqtt://[user[:password]@]host[:port]`, or `mqtts://…` for TLS.
///
/// The port defaults to 1883 (`mqtt`) or 8883 (`mqtts`). A user name or password with `@`, `:` or `/` in it is
/// written percent-encoded (`%40`). A password can also come from elsewhere (a file, so that it does not show in the
/// process list): ``password`` is a `var`.
///
/// ```swift
/// var broker = try BrokerAddress(parsing: "mqtts://robot-7@broker.example.net")
/// broker.password = try String(contentsOfFile: "/etc/fleet/password", encoding: .utf8)
/// print(broker)   // mqtts://robot-7:***@broker.example.net:8883
/// ```
public struct BrokerAddress: Sendable, Hashable, CustomStringConvertible {
    /// The host name or address (an IPv6 address without its brackets).
    public var host: String
    /// The TCP port.
    public var port: UInt16
    /// Whether the connection is TLS (`mqtts`).
    public var usesTLS: Bool
    /// The user name, if any.
    public var username: String?
    /// The password, if any.
    public var password: String?

    public init(host: String, port: UInt16? = nil, usesTLS: Bool = false, username: String? = nil,
                password: String? = nil) {
        self.host = host
        self.port = port ?? (usesTLS ? 8883 : 1883)
        self.usesTLS = usesTLS
        self.username = username
        self.password = password
    }

    /// Reads `mqtt://[user[:password]@]host[:port]` or `mqtts://…`; throws ``BrokerAddressError`` naming what is wrong.
    public init(parsing text: String) throws(BrokerAddressError) {
        // Split on Unicode scalars, not Characters: a prepended mark (U+0600…) and the `:` after it are one Character.
        let usesTLS: Bool
        var rest = Substring(text).unicodeScalars
        if rest.starts(with: "mqtt://".unicodeScalars) {
            usesTLS = false
            rest = rest.dropFirst("mqtt://".unicodeScalars.count)
        } else if rest.starts(with: "mqtts://".unicodeScalars) {
            usesTLS = true
            rest = rest.dropFirst("mqtts://".unicodeScalars.count)
        } else {
            throw BrokerAddressError(text, "it must start with mqtt:// or mqtts://")
        }
        if rest.last == "/" { rest = rest.dropLast() }
        guard !rest.contains("/"), !rest.contains("?"), !rest.contains("#") else {
            throw BrokerAddressError(text, "a broker address has no path or query")
        }
        var username: String?, password: String?
        if let at = rest.lastIndex(of: "@") {
            let credentials = rest[..<at]
            rest = rest[rest.index(after: at)...]
            let parts = credentials.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            guard let user = Self.percentDecoded(parts[0]), !user.isEmpty else {
                throw BrokerAddressError(text, "the user name is empty or badly percent-encoded")
            }
            username = user
            if parts.count == 2 {
                guard let secret = Self.percentDecoded(parts[1]) else {
                    throw BrokerAddressError(text, "the password is badly percent-encoded")
                }
                password = secret
            }
        }
        var host: Substring.UnicodeScalarView, portText: Substring.UnicodeScalarView?
        if rest.first == "[" {
            guard let close = rest.firstIndex(of: "]") else { throw BrokerAddressError(text, "an IPv6 address lacks its ]") }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if after.first == ":" { portText = after.dropFirst() } else if !after.isEmpty {
                throw BrokerAddressError(text, "unexpected text after the address")
            }
        } else {
            let parts = rest.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            host = parts[0]
            portText = parts.count == 2 ? parts[1] : nil
        }
        guard !host.isEmpty else { throw BrokerAddressError(text, "there is no host") }
        var port: UInt16?
        if let portText {
            guard let number = UInt16(String(Substring(portText))), number > 0 else {
                throw BrokerAddressError(text, "the port must be a number from 1 to 65535")
            }
            port = number
        }
        self.init(host: String(Substring(host)), port: port, usesTLS: usesTLS, username: username, password: password)
    }

    /// The address with the password masked: safe for logs. It reads back (``init(parsing:)``) as the same address
    /// with the password `***`: the user name is percent-encoded but for letters, digits and `-._~@` (the last `@`
    /// ends it), and a host with a `:` or a leading `[` is written in brackets.
    public var description: String {
        var text = usesTLS ? "mqtts://" : "mqtt://"
        if let username { text += Self.percentEncoded(username) + (password == nil ? "" : ":***") + "@" }
        text += host.unicodeScalars.contains(":") || host.unicodeScalars.first == "[" ? "[\(host)]" : host
        return text + ":\(port)"
    }

    private static func percentEncoded(_ text: String) -> String {
        var encoded = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                 UInt8(ascii: "~"), UInt8(ascii: "@"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".unicodeScalars)
                encoded.unicodeScalars.append(contentsOf: ["%", hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]])
            }
        }
        return encoded
    }

    private static func percentDecoded(_ text: Substring.UnicodeScalarView) -> String? {
        var bytes: [UInt8] = []
        var iterator = Substring(text).utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else { bytes.append(byte); continue }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                return nil
            }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// A broker address that could not be read.
public struct BrokerAddressError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was given, with any password masked.
    public let text: String
    /// What is wrong with it.
    public let reason: String

    init(_ text: String, _ reason: String) {
        // The given text may hold a password: keep the part before the first ':' after '//' and the host only.
        self.text = maskingPassword(in: text)
        self.reason = reason
    }

    public var description: String { "not a broker address: \(text): \(reason)" }

}

/// `scheme://user:password@host…` with the password replaced by `***`, for logs and errors; any other text as it is.
///
/// ```swift
/// maskingPassword(in: "postgresql://fleet:hunter2@127.0.0.1/fleet")   // postgresql://fleet:***@127.0.0.1/fleet
/// ```
public func maskingPassword(in url: String) -> String {
    guard let colon = url.firstIndex(of: ":"), url[colon...].hasPrefix("://"), let at = url.lastIndex(of: "@") else {
        return url
    }
    let start = url.index(colon, offsetBy: 3)
    guard at > start, let separator = url[start..<at].firstIndex(of: ":") else { return url }
    return String(url[..<separator]) + ":***" + String(url[at...])
}

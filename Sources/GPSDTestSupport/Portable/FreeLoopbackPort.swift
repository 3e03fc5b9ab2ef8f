#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A TCP port on 127.0.0.1 that was free when asked (bind to port 0, read it back, close).
///
/// Someone else may take it before you bind it: retry on failure. Returns 0 if no socket could be bound at all.
public func freeLoopbackPort() -> UInt16 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return 0 }
    defer { close(fd) }
    return bindToLoopback(fd) ?? 0
}

/// Whether a TCP connection to 127.0.0.1:`port` succeeds right now (it is closed again at once).
func canConnect(port: UInt16) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    return connectToLoopback(fd, port: port) == 0
}

/// Binds the socket `fd` to 127.0.0.1 at a port the system chooses: that port, or nil if it could not.
func bindToLoopback(_ fd: Int32) -> UInt16? {
    var address = loopback(port: 0)
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
        }
    }
    return bound ? UInt16(bigEndian: address.sin_port) : nil
}

/// Connects the socket `fd` to 127.0.0.1:`port` (for a non-blocking one: starts to): connect(2)'s result.
func connectToLoopback(_ fd: Int32, port: UInt16) -> Int32 {
    var address = loopback(port: port)
    return withUnsafePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
}

private func loopback(port: UInt16) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    return address
}

/// The body of `GET path` from an HTTP server on 127.0.0.1:`port` (HTTP/1.0: the server closes when done), or
/// `nil` if it cannot be reached or does not answer 200. Blocking: call it off the cooperative pool.
package func httpGet(port: UInt16, path: String) -> String? {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var timeout = timeval(tv_sec: 5, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    guard connectToLoopback(fd, port: port) == 0 else { return nil }
    let request = Array("GET \(path) HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".utf8)
    guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == request.count else { return nil }
    var response: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count <= 0 { break }
        response += buffer[..<count]
    }
    let separator: [UInt8] = [13, 10, 13, 10]   // the blank line after the headers
    guard let end = response.indices.first(where: { response[$0...].starts(with: separator) }) else { return nil }
    let head = String(decoding: response[..<end], as: UTF8.self)
    guard head.hasPrefix("HTTP/1.") && head.split(separator: " ").dropFirst().first == "200" else { return nil }
    return String(decoding: response[(end + 4)...], as: UTF8.self)
}

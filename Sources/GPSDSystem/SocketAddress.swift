package import Glibc

/// An address to connect a TCP socket to, as `getaddrinfo` gives it.
package struct SocketAddress: Sendable {
    package var family: Int32
    private var storage: [UInt8]

    /// The addresses of `host` for TCP `port`, in the resolver's order of preference (IPv6 and IPv4 for
    /// `localhost`). Looking up a name blocks for as long as the system's resolver allows.
    /// - Throws: a text saying why the name did not resolve.
    package static func resolve(host: String, port: UInt16) throws(ResolveError) -> [SocketAddress] {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV | AI_ADDRCONFIG
        var list: UnsafeMutablePointer<addrinfo>?
        let result = getaddrinfo(host, String(port), &hints, &list)
        guard result == 0 else {
            let number = errno
            throw ResolveError(
                reason: result == EAI_SYSTEM ? SystemError(function: "getaddrinfo", number: number).text
                                             : String(cString: gai_strerror(result)),
                errorNumber: result == EAI_SYSTEM ? number : nil)
        }
        defer { freeaddrinfo(list) }
        var addresses: [SocketAddress] = []
        var entry = list
        while let info = entry?.pointee {
            if let address = info.ai_addr {
                let bytes = UnsafeRawBufferPointer(start: address, count: Int(info.ai_addrlen))
                addresses.append(SocketAddress(family: info.ai_family, storage: Array(bytes)))
            }
            entry = info.ai_next
        }
        return addresses
    }

    /// Calls `body` with the address as the C API wants it.
    package func withSockaddr<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        storage.withUnsafeBytes { body($0.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t($0.count)) }
    }

    package struct ResolveError: Error {
        package var reason: String
        package var errorNumber: Int32?
    }
}

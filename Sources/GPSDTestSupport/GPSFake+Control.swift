import Foundation

#if canImport(Glibc)
import Glibc
#endif

// gpsd's control socket: gpsfake starts its gpsd with `-F $TMPDIR/gpsfake-<pid>.sock`, through which it adds its
// receivers; a test removes one and adds it back the same way, as `gpsdctl` would (gpsd(8), "GPSD CONTROL").
extension GPSFake {
    /// The path of gpsd's control socket in gpsfake's private `TMPDIR`; `nil` until gpsd has made it.
    public var controlSocket: String? {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.first { $0.hasPrefix("gpsfake-") && $0.hasSuffix(".sock") }.map { "\(directory.path)/\($0)" }
    }

    /// Removes receiver `device` (`/dev/pts/N`) from gpsd, as unplugging it would: gpsd closes it and tells its
    /// clients (a DEVICE report with `activated` 0).
    /// - Throws: ``GPSFakeError`` when the control socket is not there or gpsd does not accept it (`OK`, or from gpsd
    ///   3.25 on `{"class":"ACK"}`).
    public func removeDevice(_ device: String) throws { try control("-\(device)") }

    /// Adds receiver `device` back to gpsd, as plugging it in would.
    /// - Throws: ``GPSFakeError`` when the control socket is not there or gpsd does not accept it (`OK`, or from gpsd
    ///   3.25 on `{"class":"ACK"}`).
    public func addDevice(_ device: String) throws { try control("+\(device)") }

    /// Sends one command to the control socket and reads gpsd's answer (`OK` or `ERROR`; from gpsd 3.25 on, an `ACK`
    /// or `ERROR` object).
    private func control(_ command: String) throws {
        guard let path = controlSocket else {
            throw GPSFakeError(.setupFailed, "no control socket in \(directory.path)", standardError: standardError)
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw GPSFakeError(.setupFailed, "socket(AF_UNIX)", errno: errno) }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw GPSFakeError(.setupFailed, "control socket path too long: \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: bytes)
            buffer[bytes.count] = 0
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else { throw GPSFakeError(.setupFailed, "connect \(path)", errno: errno) }
        let line = Array("\(command)\r\n".utf8) + [0]
        guard line.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == line.count else {
            throw GPSFakeError(.setupFailed, "send to \(path)", errno: errno)
        }
        var answer = [UInt8](repeating: 0, count: 16)
        let count = answer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        let text = count > 0 ? String(decoding: answer[..<count], as: UTF8.self) : ""
        // gpsd up to 3.24 answers `OK`; 3.25 on answers `{"class":"ACK"}` (and an ERROR object on failure).
        guard text.hasPrefix("OK") || text.contains(#""class":"ACK""#) else {
            throw GPSFakeError(.setupFailed, "gpsd's control socket answered '\(text)' to \(command)", standardError: standardError)
        }
    }
}

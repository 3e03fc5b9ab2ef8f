import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// Reads a password from a file (so that it does not show in the process list): its first line, without the line
/// end. Throws ``SecretFileError`` naming the file when it cannot be read or is empty.
public func readSecret(fromFile path: String) throws(SecretFileError) -> String {
    guard let data = FileManager.default.contents(atPath: path) else {
        throw SecretFileError(path: path, reason: String(cString: strerror(errno)))
    }
    guard let text = String(validating: data, as: UTF8.self) else {
        throw SecretFileError(path: path, reason: "not UTF-8 text")
    }
    let line = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
    let secret = line.hasSuffix("\r") ? line.dropLast() : line
    guard !secret.isEmpty else { throw SecretFileError(path: path, reason: "its first line is empty") }
    return String(secret)
}

/// A password file that could not be read.
public struct SecretFileError: Error, Sendable, CustomStringConvertible {
    public let path: String
    public let reason: String
    public var description: String { "cannot read the password from \(path): \(reason)" }
}

import Glibc

/// A system call that failed: which, and the `errno` it left.
///
/// The layers above turn it into their own error (GPSDLocation's `LocationError`, the fleet's `UplinkError`),
/// carrying the number.
public struct SystemError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The call, as in `pipe` or `connect`.
    public var function: String
    /// The `errno` value it failed with.
    public var number: Int32

    /// The failure of `function` with `errno` `number`.
    public init(function: String, number: Int32) {
        self.function = function
        self.number = number
    }

    /// `strerror`'s text for ``number``.
    public var text: String {
        // glibc's strerror is thread-safe since 2.32: known numbers give constant texts.
        strerror(number).map { String(cString: $0) } ?? "error \(number)"
    }

    /// `pipe: Too many open files`.
    public var description: String { "\(function): \(text)" }
}

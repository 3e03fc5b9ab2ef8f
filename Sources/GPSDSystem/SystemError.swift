import Glibc

/// A system call that failed: which, and the `errno` it left.
///
/// Internal: the layers above turn it into their public error (`locationError(_:_:)`, beside `LocationError`),
/// carrying the number.
package struct SystemError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The call, as in `pipe` or `connect`.
    package var function: String
    /// The `errno` value it failed with.
    package var number: Int32

    /// The failure of `function` with `errno` `number`.
    package init(function: String, number: Int32) {
        self.function = function
        self.number = number
    }

    /// `strerror`'s text for ``number``.
    package var text: String {
        // glibc's strerror is thread-safe since 2.32: known numbers give constant texts.
        strerror(number).map { String(cString: $0) } ?? "error \(number)"
    }

    /// `pipe: Too many open files`.
    package var description: String { "\(function): \(text)" }
}

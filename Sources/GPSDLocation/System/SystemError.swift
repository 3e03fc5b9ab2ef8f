import Glibc

/// A system call that failed: which, and the `errno` it left.
///
/// Internal: at the public boundary it becomes a ``LocationError`` (``LocationError/Code/resourceUnavailable``
/// for a resource the system refused, ``LocationError/Code/gpsdUnavailable`` for a connection that could not be
/// made, ``LocationError/Code/connectionLost`` for one that broke), carrying the number in
/// ``LocationError/errorNumber``.
package struct SystemError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The call, as in `pipe` or `connect`.
    var function: String
    /// The `errno` value it failed with.
    var number: Int32

    /// `strerror`'s text for ``number``.
    var text: String {
        // glibc's strerror is thread-safe since 2.32: known numbers give constant texts.
        strerror(number).map { String(cString: $0) } ?? "error \(number)"
    }

    /// `pipe: Too many open files`.
    package var description: String { "\(function): \(text)" }

    /// This failure as the public error, with `code` and a sentence that says what was being done.
    func locationError(_ code: LocationError.Code, _ doing: String) -> LocationError {
        LocationError(code, "\(doing): \(description)", errorNumber: number)
    }
}

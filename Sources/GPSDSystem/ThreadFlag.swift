import Glibc

/// A flag of each thread's own (a POSIX thread-specific key): whether the calling thread is inside some call,
/// for code that must not wait for what that call's thread will do only after it returns.
///
/// Make one per purpose and keep it for the life of the process: a process has only
/// `PTHREAD_KEYS_MAX` (1024) keys, and this one is never given back.
package struct ThreadFlag: Sendable {
    private let key: pthread_key_t

    package init() {
        var key = pthread_key_t()
        // Fails only when the process has used up its keys: a fault of the program, not a condition to handle.
        let result = pthread_key_create(&key, nil)
        precondition(result == 0, "pthread_key_create failed: \(result)")
        self.key = key
    }

    /// Whether the calling thread is inside ``whileSet(_:)``.
    package var isSet: Bool { pthread_getspecific(key) != nil }

    /// Runs `body` with the flag set on the calling thread, and restores it after (calls may nest).
    package func whileSet<Result>(_ body: () throws -> Result) rethrows -> Result {
        let previous = pthread_getspecific(key)
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: 1))
        defer { pthread_setspecific(key, previous) }
        return try body()
    }
}

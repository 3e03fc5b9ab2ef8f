import Glibc

/// Splits a byte stream into lines (LF or CRLF), dropping lines longer than `limit` bytes.
package struct LineSplitter {
    package let limit: Int
    private var pending: [UInt8] = []
    private var overflowing = false

    package init(limit: Int = 64 * 1024) { self.limit = limit }

    /// Feeds bytes; calls `line` for each complete line (without its terminator) and `skipped` for each line
    /// that was too long.
    package mutating func append(
        _ bytes: UnsafeRawBufferPointer, line: (ArraySlice<UInt8>) -> Void, skipped: () -> Void
    ) {
        // Plain pointers and memchr, no `Slice` of the buffer: under ThreadSanitizer, session threads that first
        // touched `Slice<UnsafeRawBufferPointer>` (prespecialized metadata) at once were seen to hang in the
        // runtime's once for it, as `Repeated<CChar>` did in the decoder.
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        let count = bytes.count
        var start = 0
        while start < count, let found = memchr(base + start, Int32(UInt8(ascii: "\n")), count - start) {
            let newline = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
            if overflowing || pending.count + (newline - start) > limit {
                overflowing = false
                skipped()
            } else {
                pending.append(contentsOf: UnsafeBufferPointer(start: base + start, count: newline - start))
                if pending.last == UInt8(ascii: "\r") { pending.removeLast() }
                if !pending.isEmpty { line(pending[...]) }
            }
            pending.removeAll(keepingCapacity: true)
            start = newline + 1
        }
        guard !overflowing else { return }
        pending.append(contentsOf: UnsafeBufferPointer(start: base + start, count: count - start))
        if pending.count > limit {
            pending.removeAll(keepingCapacity: true)
            overflowing = true
        }
    }

    /// The last line of a stream that did not end with a newline.
    package mutating func finish(line: (ArraySlice<UInt8>) -> Void, skipped: () -> Void) {
        if overflowing { skipped() } else if !pending.isEmpty { line(pending[...]) }
        pending.removeAll()
        overflowing = false
    }
}

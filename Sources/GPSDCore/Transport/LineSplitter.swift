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
        var start = bytes.startIndex
        while let newline = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) {
            if overflowing || pending.count + (newline - start) > limit {
                overflowing = false
                skipped()
            } else {
                pending.append(contentsOf: bytes[start..<newline])
                if pending.last == UInt8(ascii: "\r") { pending.removeLast() }
                if !pending.isEmpty { line(pending[...]) }
            }
            pending.removeAll(keepingCapacity: true)
            start = newline + 1
        }
        guard !overflowing else { return }
        pending.append(contentsOf: bytes[start...])
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

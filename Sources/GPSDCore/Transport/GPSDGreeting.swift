/// What a peer at gpsd's address sends first, judged before its bytes go on to the reader: gpsd greets every
/// client at once with a line of JSON, its VERSION report (`{"class":"VERSION","release":"3.22",…}`), and sends
/// nothing before it. A peer whose first line is not a report in gpsd's JSON (a web server's
/// `HTTP/1.0 400 Bad request`, an SSH server's banner, a receiver's NMEA) is not gpsd.
///
/// A value: bytes in, a verdict out. The connection feeds it until it has one (``GPSDConnection/awaitGreeting``).
struct GPSDGreeting {
    /// What the first bytes say.
    enum Verdict: Equatable {
        /// Not a whole line yet, and nothing so far that gpsd would not send.
        case incomplete
        /// A report in gpsd's JSON: the peer is gpsd.
        case gpsd
        /// Something gpsd never sends first: `firstLine`, the beginning of it as text to show.
        case notGPSD(firstLine: String)
    }

    /// How much of a first line is shown, in characters.
    static let shownLength = 60

    /// Everything received so far, which the reader gets once the peer is judged gpsd.
    private(set) var received: [UInt8] = []
    private let lineLimit: Int

    /// - Parameter lineLimit: the longest first line to wait for the end of (a longer one is no report of gpsd's).
    init(lineLimit: Int = LineSplitter().limit) { self.lineLimit = lineLimit }

    /// Adds what came next, and judges everything received.
    mutating func append(_ bytes: some Collection<UInt8>) -> Verdict {
        received.append(contentsOf: bytes)
        // White space before the first line is let through; gpsd sends none.
        guard let start = received.firstIndex(where: { !JSONScan.isSpace($0) }) else { return .incomplete }
        // Every report of gpsd's begins with '{': anything else is judged at once, without waiting for its line's end.
        guard received[start] == UInt8(ascii: "{") else { return .notGPSD(firstLine: shown(from: start)) }
        guard let newline = received[start...].firstIndex(of: UInt8(ascii: "\n")) else {
            return received.count - start > lineLimit ? .notGPSD(firstLine: shown(from: start)) : .incomplete
        }
        let isReport = received[start..<newline].withUnsafeBufferPointer { JSONScan.reportShape($0) != nil }
        return isReport ? .gpsd : .notGPSD(firstLine: shown(from: start))
    }

    /// The first line from `start`, as text to show: at most ``shownLength`` characters, what a terminal would
    /// obey (and bytes that are not UTF-8) replaced with U+FFFD.
    private func shown(from start: Int) -> String {
        let end = received[start...].firstIndex { $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") } ?? received.endIndex
        var text = ""
        var count = 0
        for scalar in String(decoding: received[start..<end], as: UTF8.self).unicodeScalars {
            guard count < Self.shownLength else { return text + "…" }
            text.unicodeScalars.append(scalar.isPrintable ? scalar : "\u{FFFD}")
            count += 1
        }
        return text
    }
}

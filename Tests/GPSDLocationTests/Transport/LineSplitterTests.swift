@testable import GPSDCore
import GPSDLocation
import Testing

@Suite("LineSplitter")
struct LineSplitterTests {
    /// What a splitter handed out, in order: a line's text, or `nil` for a skipped line.
    private struct Output {
        var items: [String?] = []
        var lines: [String] { items.compactMap(\.self) }
        var skipped: Int { items.count { $0 == nil } }
    }

    private func feed(_ splitter: inout LineSplitter, _ chunk: String, into output: inout Output) {
        Array(chunk.utf8).withUnsafeBytes { bytes in
            splitter.append(
                bytes,
                line: { output.items.append(String(decoding: $0, as: UTF8.self)) },
                skipped: { output.items.append(nil) })
        }
    }

    private func finish(_ splitter: inout LineSplitter, into output: inout Output) {
        splitter.finish(
            line: { output.items.append(String(decoding: $0, as: UTF8.self)) },
            skipped: { output.items.append(nil) })
    }

    /// Feeds `chunks` in order, then finishes.
    private func split(_ chunks: [String], limit: Int = 64 * 1024, finishing: Bool = true) -> Output {
        var splitter = LineSplitter(limit: limit)
        var output = Output()
        for chunk in chunks { feed(&splitter, chunk, into: &output) }
        if finishing { finish(&splitter, into: &output) }
        return output
    }

    @Test func splitsOnLF() {
        let output = split(["{\"a\":1}\n{\"b\":2}\n"], finishing: false)
        #expect(output.items == ["{\"a\":1}", "{\"b\":2}"])
    }

    @Test func splitsOnCRLF() {
        let output = split(["one\r\ntwo\r\n", "three\n"], finishing: false)
        #expect(output.items == ["one", "two", "three"])
    }

    @Test func crlfSplitBetweenAppends() {
        let output = split(["one\r", "\ntwo\r", "\n"], finishing: false)
        #expect(output.items == ["one", "two"])
    }

    @Test func onlyATrailingCRIsRemoved() {
        let output = split(["a\rb\n"], finishing: false)
        #expect(output.items == ["a\rb"])
    }

    @Test func partialLinesAcrossAppends() {
        var splitter = LineSplitter()
        var output = Output()
        feed(&splitter, "{\"class\":", into: &output)
        #expect(output.items.isEmpty)
        feed(&splitter, "\"TPV\"", into: &output)
        #expect(output.items.isEmpty)
        feed(&splitter, "}\n{\"cla", into: &output)
        #expect(output.items == ["{\"class\":\"TPV\"}"])
        feed(&splitter, "ss\":\"SKY\"}\n", into: &output)
        #expect(output.items == ["{\"class\":\"TPV\"}", "{\"class\":\"SKY\"}"])
    }

    @Test func byteByByte() {
        let text = "first\r\nsecond\nthird\n"
        var splitter = LineSplitter()
        var bytewise = Output()
        for byte in Array(text.utf8) {
            [byte].withUnsafeBytes { bytes in
                splitter.append(
                    bytes,
                    line: { bytewise.items.append(String(decoding: $0, as: UTF8.self)) },
                    skipped: { bytewise.items.append(nil) })
            }
        }
        #expect(bytewise.items == ["first", "second", "third"])
    }

    @Test func emptyLinesAreDropped() {
        let output = split(["\n\none\n\r\n\n", "\ntwo\n"], finishing: false)
        #expect(output.items == ["one", "two"])
    }

    @Test func overLongLineAcrossAppendsIsSkippedOnceAndNextLineIsIntact() {
        // 20 bytes without a newline overflow a limit of 8; the rest of that line follows later.
        let output = split(["ok\n0123456789", "0123456789", "abc", "def\nnext\n"], limit: 8, finishing: false)
        #expect(output.items == ["ok", nil, "next"])
        #expect(output.skipped == 1)
    }

    @Test func overLongLineFollowedByPartialLine() {
        var splitter = LineSplitter(limit: 4)
        var output = Output()
        feed(&splitter, "abcdefgh", into: &output)
        feed(&splitter, "ijk\nne", into: &output)
        feed(&splitter, "xt\n", into: &output)
        #expect(output.items == [nil, "next"])
    }

    @Test func overLongLineCompletedInALaterAppendIsSkipped() {
        // Neither piece is over the limit of 8, the line is (10 bytes).
        let output = split(["01234", "56789\nnext\n"], limit: 8, finishing: false)
        #expect(output.items == [nil, "next"])
    }

    @Test func lineOfExactlyTheLimitPasses() {
        let output = split(["abcd", "efgh", "\n"], limit: 8, finishing: false)
        #expect(output.items == ["abcdefgh"])
    }

    /// "dropping lines longer than `limit` bytes": also when the whole line arrives in one append.
    @Test func overLongLineInOneAppendIsSkipped() {
        let output = split(["0123456789abcdef\nnext\n"], limit: 8, finishing: false)
        #expect(output.items == [nil, "next"])
        #expect(output.lines.last == "next")
    }

    @Test func finishFlushesTheLastUnterminatedLine() {
        let output = split(["one\ntwo"])
        #expect(output.items == ["one", "two"])
    }

    @Test func finishWithNothingPendingHandsOutNothing() {
        #expect(split(["one\n"]).items == ["one"])
        #expect(split([]).items == [])
    }

    @Test func finishOfAnOverLongUnterminatedLineCountsItSkipped() {
        let output = split(["one\n0123456789"], limit: 8)
        #expect(output.items == ["one", nil])
    }

    @Test func finishResetsTheSplitter() {
        var splitter = LineSplitter(limit: 4)
        var output = Output()
        feed(&splitter, "toolong", into: &output)
        finish(&splitter, into: &output)
        feed(&splitter, "ab\n", into: &output)
        finish(&splitter, into: &output)
        #expect(output.items == [nil, "ab"])
    }
}

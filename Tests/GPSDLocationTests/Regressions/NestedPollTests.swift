@testable import GPSDCore
import GPSDLocation
import GPSDTestSupport
import Testing

/// A POLL reply whose `tpv` list holds a POLL, whose list holds a POLL, …: each was decoded again at every depth,
/// and one 65 KB line nested 928 deep held the reader thread for seconds. The decoder's work is counted in bytes
/// (``ReportDecoder/bytesExamined``), not timed.
@Suite("Regressions: a nested POLL reply")
struct NestedPollTests {
    /// A POLL whose `tpv` list holds the POLL nested `depth - 1` deep; the innermost holds one real TPV.
    static func poll(depth: Int) -> String {
        let open = #"{"class":"POLL","time":"2025-06-01T12:00:10.000Z","active":1,"tpv":["#
        let close = #"],"sky":[]}"#
        return String(repeating: open, count: depth) + ReportLines.tpv(second: 9) + String(repeating: close, count: depth)
    }

    @Test("the decoder's work grows with the line, not with the line times its depth",
          arguments: [1, 2, 4, 8, 15, 50, 100, 200, 400, 928])
    func linearWork(depth: Int) throws {
        let decoder = try ReportDecoder()
        let line = Array(Self.poll(depth: depth).utf8)
        let report = decoder.decode(line)
        #expect(decoder.bytesExamined <= 10 * line.count, "\(decoder.bytesExamined) bytes for a line of \(line.count)")
        switch depth {
        case 1:
            // A real POLL: its TPV is a fix.
            guard case .poll(_, let reports)? = report, case .fix(let fix) = reports.first else {
                Issue.record("\(String(describing: report))")
                return
            }
            #expect(fix.timestamp == GPSDTime.date(from: ReportLines.time(9)))
        case ...15:
            // A POLL in a POLL's tpv list is no TPV: skipped, not decoded (libgps 3.25 and later may refuse the
            // whole line themselves).
            let empty = GPSDReport.poll(time: GPSDTime.date(from: "2025-06-01T12:00:10.000Z"), reports: [])
            #expect(report == nil || report == empty, "\(String(describing: report))")
        default:
            // Deeper than JSONScan walks (32 levels): not a report at all.
            #expect(report == nil)
        }
    }

    @Test("gpsd's own deepest report, a POLL with its SKY's satellites, is within the bound")
    func realPollIsWithinTheBound() throws {
        let sky = #"{"class":"SKY","device":"/dev/ttyUSB0","satellites":[{"PRN":5,"el":40,"az":90,"ss":30,"used":true}]}"#
        let line = #"{"class":"POLL","time":"2025-06-01T12:00:10.000Z","active":1,"tpv":["#
            + ReportLines.tpv(second: 9) + #"],"sky":["# + sky + "]}"
        guard case .poll(_, let reports)? = try ReportDecoder().decode(Array(line.utf8)) else {
            Issue.record("not a POLL")
            return
        }
        #expect(reports.count == 1)
    }
}

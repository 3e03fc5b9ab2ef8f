import GPSDTestSupport
import Testing

/// The tests that run `whereami` as a process (in the nested suites, one file each), one test at a time.
///
/// Each launches processes (whereami, gpsfake with its gpsd, python, bash), and a machine with two cores runs
/// only so many at once: run side by side, they slowed one another and every timing-sensitive test in this
/// test process, the library's included, past their limits. One at a time, the whole takes about a minute.
@Suite("whereami as a process", .serialized, .liveSuite)
struct WhereAmIProcessTests {}

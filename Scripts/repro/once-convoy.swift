// THREADS threads (8 unless given) each call zip(_:_:).allSatisfy on a 16-byte buffer CALLS times (2,000 unless
// given), then the program prints the calls a second and exits 0. Built without optimization (as `swift build` builds
// a package's tests), each call runs libswiftCore's unspecialized Zip2Sequence.Iterator.next, which asks
// swift_getCanonicalPrespecializedGenericMetadata for Optional's metadata through swift::once on every element.
// Under ThreadSanitizer that once takes its lock, a priority-inheritance futex, every time (Documentation/Testing.md).
// No GPSDLocation here: Scripts/repro/run builds it with swiftc alone, with and without -sanitize=thread.
import Foundation

let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let threads = arguments.first ?? 8
let calls = arguments.dropFirst().first ?? 2_000
let bytes = [UInt8](repeating: 0x2A, count: 16)
let start = DispatchTime.now()
let done = DispatchGroup()
for _ in 0..<threads {
    done.enter()
    Thread {
        var same = 0
        bytes.withUnsafeBufferPointer { buffer in
            for _ in 0..<calls where zip(buffer, buffer).allSatisfy({ $0 == $1 }) { same += 1 }
        }
        precondition(same == calls)
        done.leave()
    }.start()
}
done.wait()
let seconds = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
print("\(threads) threads, \(threads * calls) calls in \(String(format: "%.3f", seconds)) s: \(Int(Double(threads * calls) / seconds)) calls/s")

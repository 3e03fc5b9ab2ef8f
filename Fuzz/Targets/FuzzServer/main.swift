// libFuzzer's entry: Scripts/fuzz server (see its header).
import FuzzChecks

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    FuzzCheck.server.run(Array(UnsafeRawBufferPointer(start: start, count: count)))
    return 0
}

// libFuzzer's entry: Scripts/fuzz json (see its header).
import FuzzChecks

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    FuzzCheck.json.run(Array(UnsafeRawBufferPointer(start: start, count: count)))
    return 0
}

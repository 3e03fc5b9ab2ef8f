// libFuzzer's entry: Scripts/fuzz decoder (see its header).
import FuzzChecks

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    FuzzCheck.decoder.run(Array(UnsafeRawBufferPointer(start: start, count: count)))
    return 0
}

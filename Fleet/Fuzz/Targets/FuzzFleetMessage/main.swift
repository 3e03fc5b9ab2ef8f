// libFuzzer's entry: Scripts/fleet-fuzz message (see its header).
import FleetFuzzChecks

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    FleetFuzzCheck.message.run(Array(UnsafeRawBufferPointer(start: start, count: count)))
    return 0
}

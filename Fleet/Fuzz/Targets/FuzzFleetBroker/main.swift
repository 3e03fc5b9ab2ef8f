// libFuzzer's entry: Scripts/fleet-fuzz broker (see its header).
import FleetFuzzChecks

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    FleetFuzzCheck.broker.run(Array(UnsafeRawBufferPointer(start: start, count: count)))
    return 0
}

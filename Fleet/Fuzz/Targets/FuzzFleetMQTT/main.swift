// libFuzzer's entry: Scripts/fleet-fuzz mqtt (see its header).
import FleetFuzzChecks

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    FleetFuzzCheck.mqtt.run(Array(UnsafeRawBufferPointer(start: start, count: count)))
    return 0
}

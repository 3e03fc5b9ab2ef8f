public import Foundation

/// gpsd recordings (what `gpspipe -w` writes) made for the fleet's tests: one receiver, one TPV an epoch, a 3D fix
/// every second, moving north-east from Berlin.
public enum FleetRecording {
    /// The fix time of epoch `index` (from 0) of a recording starting at `start`.
    public static func time(ofEpoch index: Int, start: Date) -> Date { start.addingTimeInterval(Double(index)) }

    /// The first fix time of the recordings by default: 2025-06-01T12:00:00Z.
    public static let defaultStart = Date(timeIntervalSince1970: 1_748_779_200)

    /// Writes `count` epochs to `url`, the first at `start`.
    public static func write(count: Int, to url: URL, start: Date = defaultStart) throws {
        var text = """
        {"class":"VERSION","release":"3.22","rev":"3.22","proto_major":3,"proto_minor":14}
        {"class":"DEVICES","devices":[]}
        {"class":"WATCH","enable":true,"json":true,"nmea":false,"raw":0,"scaled":false,"timing":false,"split24":false,"pps":false}
        {"class":"DEVICE","path":"/dev/ttyUSB0","driver":"u-blox","activated":"2025-06-01T11:59:59.000Z","native":1,"bps":115200,"parity":"N","stopbits":1,"cycle":1.00}

        """
        text.reserveCapacity(text.utf8.count + count * 260)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for index in 0..<count {
            let time = formatter.string(from: Self.time(ofEpoch: index, start: start))
            let latitude = 52.5 + Double(index) * 0.00001
            let longitude = 13.4 + Double(index) * 0.00001
            let altitude = 35 + Double(index % 100) * 0.1
            text += "{\"class\":\"TPV\",\"device\":\"/dev/ttyUSB0\",\"mode\":3,\"time\":\"\(time)\",\"ept\":0.005,"
            text += "\"lat\":\(String(format: "%.9f", latitude)),\"lon\":\(String(format: "%.9f", longitude)),"
            text += "\"altHAE\":\(String(format: "%.4f", altitude + 17)),\"altMSL\":\(String(format: "%.4f", altitude)),"
            text += "\"alt\":\(String(format: "%.4f", altitude)),\"epv\":4.5,\"track\":45.0,\"speed\":1.5,\"climb\":0.0,"
            text += "\"eph\":2.5,\"sep\":5.1}\n"
        }
        try text.write(to: url, atomically: true, encoding: .utf8)
    }
}

/// The commands GPSDLocation sends to gpsd (its JSON protocol, `man gpsd_json`).
enum GPSDCommand {
    /// Starts a watch that reports in JSON, of every receiver or of one (`?WATCH`'s `device`), as libgps's
    /// `gps_stream(WATCH_ENABLE | WATCH_JSON [| WATCH_DEVICE])` does.
    static func watch(device: String?) -> String {
        "?WATCH={\"enable\":true,\"json\":true" + (device.map { ",\"device\":\(jsonString($0))" } ?? "") + "};\n"
    }

    /// Asks for the last fix of every active receiver at once. gpsd answers only clients that watch.
    static let poll = "?POLL;\n"

    /// `text` as a JSON string: quoted, with quotes, backslashes and control characters escaped.
    static func jsonString(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

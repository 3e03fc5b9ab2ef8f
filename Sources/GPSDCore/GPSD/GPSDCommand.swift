/// The commands GPSDLocation sends to gpsd (its JSON protocol, `man gpsd_json`).
enum GPSDCommand {
    /// Starts a watch that reports in JSON, of every receiver or of one (`?WATCH`'s `device`), as libgps's
    /// `gps_stream(WATCH_ENABLE | WATCH_JSON [| WATCH_DEVICE])` does.
    static func watch(device: String?) -> String {
        "?WATCH={\"enable\":true,\"json\":true" + (device.map { ",\"device\":\(JSONText.quoted($0))" } ?? "") + "};\n"
    }

    /// Asks for the last fix of every active receiver at once. gpsd answers only clients that watch.
    static let poll = "?POLL;\n"
}

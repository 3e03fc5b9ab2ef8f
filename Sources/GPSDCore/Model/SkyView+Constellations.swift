extension SkyView {
    /// How many satellites of one system a receiver sees and uses: an element of ``SkyView/constellations``.
    ///
    /// ```swift
    /// for system in sky.constellations {
    ///     print("\(system.constellation): \(system.used) of \(system.visible) used")   // "Galileo: 4 of 5 used"
    /// }
    /// ```
    public struct ConstellationCount: Sendable, Hashable, Codable {
        /// The system.
        public var constellation: Satellite.Constellation
        /// Its satellites in view: those listed.
        public var visible: Int
        /// Its satellites used in the fix: those listed as used.
        public var used: Int

        /// The counts alone.
        public var count: SatelliteCount { SatelliteCount(visible: visible, used: used) }

        /// Makes a count: `SkyView.ConstellationCount(constellation: .gps, visible: 8, used: 5)`.
        public init(constellation: Satellite.Constellation, visible: Int, used: Int) {
            self.constellation = constellation
            self.visible = visible
            self.used = used
        }
    }

    /// The satellites in view and used, system by system: one count for each system with a satellite in
    /// ``satellites``, in the order of `Satellite.Constellation.allCases` (GPS, SBAS, Galileo, BeiDou, IMES,
    /// QZSS, GLONASS, NavIC, then those of no known system). Counted from ``satellites``: when ``isTruncated``,
    /// of the first satellites only, so the counts may add up to less than ``visible`` and ``used``; a view
    /// without a list (a SKY that gave counts alone) has none.
    ///
    /// ```swift
    /// let summary = sky.constellations.map { "\($0.constellation) \($0.used)/\($0.visible)" }
    /// print(summary.joined(separator: ", "))   // "GPS 5/8, SBAS 0/1, Galileo 4/5, BeiDou 3/5, QZSS 1/1, GLONASS 4/6"
    /// ```
    public var constellations: [ConstellationCount] {
        Satellite.Constellation.allCases.compactMap { system in
            let count = count(for: system)
            return count.visible > 0 ? ConstellationCount(constellation: system, visible: count.visible, used: count.used) : nil
        }
    }

    /// The satellites of `constellation` in view and used, as ``constellations`` counts them; zero for a system
    /// with none in the list.
    ///
    /// ```swift
    /// if sky.count(for: .galileo).used == 0 { print("no Galileo satellite in the fix") }
    /// ```
    public func count(for constellation: Satellite.Constellation) -> SatelliteCount {
        var visible = 0, used = 0
        for satellite in satellites where satellite.constellation == constellation {
            visible += 1
            if satellite.isUsed { used += 1 }
        }
        return SatelliteCount(visible: visible, used: used)
    }
}

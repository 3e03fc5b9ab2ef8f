/// An offset in metres in the local tangent plane of a reference location: east, north and up.
///
/// The axes are those of ROS REP 103's ENU frames: x east, y north, z up along the WGS84 ellipsoid's normal at the
/// reference, right-handed. ``ned`` gives the same offset as aviation's north, east, down.
///
/// Offsets are exact Cartesian vectors (through Earth-centred, Earth-fixed coordinates, not a flat-earth
/// approximation): a point 10 km away on the ellipsoid lies about 7.8 m below the reference's horizontal plane.
///
/// ```swift
/// let base = Location(coordinate: .init(latitude: 52.5163, longitude: 13.3777), ellipsoidalAltitude: 80)
/// let rover = Location(coordinate: .init(latitude: 52.5164, longitude: 13.3779), ellipsoidalAltitude: 81)
/// let offset = rover.offset(from: base)   // east 13.6, north 11.1, up 1.0 (metres, rounded)
/// let back = base.location(atOffset: offset)   // rover's coordinate and ellipsoidal altitude
/// ```
public struct LocalOffset: Sendable, Hashable, Codable {
    /// Metres east of the reference (ENU x).
    public var east: Double
    /// Metres north of the reference (ENU y).
    public var north: Double
    /// Metres up along the reference's ellipsoidal normal (ENU z).
    public var up: Double

    /// An offset from east, north and up in metres.
    ///
    /// ```swift
    /// let ahead = LocalOffset(east: 0, north: 5, up: 0)   // 5 m north of the reference
    /// ```
    public init(east: Double, north: Double, up: Double) {
        self.east = east
        self.north = north
        self.up = up
    }

    /// An offset from aviation's north, east, down.
    ///
    /// ```swift
    /// let offset = LocalOffset(LocalOffset.NED(north: 10, east: 2, down: -3))
    /// offset.up   // 3.0
    /// ```
    public init(_ ned: NED) {
        self.init(east: ned.east, north: ned.north, up: -ned.down)
    }

    /// The same offset as north, east, down (aviation's NED frame): `(north, east, -up)`.
    ///
    /// ```swift
    /// LocalOffset(east: 2, north: 10, up: 3).ned   // north 10, east 2, down -3
    /// ```
    public var ned: NED {
        NED(north: north, east: east, down: -up)
    }

    /// An offset in metres as north, east, down: aviation's local frame, right-handed, z down along the
    /// ellipsoidal normal.
    ///
    /// ```swift
    /// let ned = LocalOffset.NED(north: 10, east: 2, down: -3)
    /// ned.down   // -3.0: three metres up
    /// ```
    public struct NED: Sendable, Hashable, Codable {
        /// Metres north of the reference.
        public var north: Double
        /// Metres east of the reference.
        public var east: Double
        /// Metres down along the reference's ellipsoidal normal; negative above the reference.
        public var down: Double

        /// An offset from north, east and down in metres.
        ///
        /// ```swift
        /// let below = LocalOffset.NED(north: 0, east: 0, down: 2)   // 2 m straight down
        /// ```
        public init(north: Double, east: Double, down: Double) {
            self.north = north
            self.east = east
            self.down = down
        }
    }
}

import Foundation
import GPSDLocation
import GPSDSystem

/// A receiver on a straight road east from Alexanderplatz, made up from a seeded generator: the truth (how far along
/// it is, how fast it goes) and the fixes a consumer receiver reports of it.
///
/// Its reported positions wander around the truth as GNSS fixes at rest do: a random walk pulled back towards the
/// truth (an Ornstein–Uhlenbeck process, each axis `positionNoise` metres standard deviation, correlated over
/// `noiseTimeConstant` seconds), whatever the rate. Its reported speed at rest is 0.1 ... 0.5 m/s, in motion the
/// true speed with 0.1 m/s of noise. Each fix draws its horizontal accuracy from `accuracy`.
struct SyntheticReceiver {
    /// One fix, and the truth at its time.
    struct Sample {
        var location: Location
        /// Metres per second, 0 when the receiver stands still.
        var trueSpeed: Double
        /// Metres from the true position to the reported one.
        var error: Double
    }

    /// Fixes per second.
    let rate: Double
    /// Metres, each axis's standard deviation of the reported position around the truth.
    var positionNoise = 1.5
    /// Seconds over which the position noise is correlated.
    var noiseTimeConstant = 20.0
    /// The range each fix's `horizontalAccuracy` is drawn from; `nil` reports none.
    var accuracy: ClosedRange<Double>? = 5...10
    /// Whether fixes carry a speed (a 2D fix of a receiver that sends none has none).
    var reportsSpeed = true
    /// The range each fix's `speedAccuracy` is drawn from; `nil` reports none.
    var speedAccuracy: ClosedRange<Double>?

    private(set) var samples: [Sample] = []
    private var random: SplitMix64
    private var along = 0.0
    private var speed = 0.0
    private var noise: (east: Double, north: Double)
    private static let start = Location(coordinate: .init(latitude: 52.5219, longitude: 13.4132))
    private static let startTime = Date(timeIntervalSince1970: 1_748_779_200)   // 2025-06-01T12:00:00Z

    init(seed: UInt64, rate: Double = 1) {
        self.rate = rate
        random = SplitMix64(seed: seed)
        noise = (0, 0)
        noise = (positionNoise * gaussian(), positionNoise * gaussian())   // already wandering at the first fix
    }

    var locations: [Location] { samples.map(\.location) }

    /// Stands still.
    mutating func stop(for seconds: Double) {
        speed = 0
        for _ in 0..<ticks(seconds) { tick() }
    }

    /// Speeds up to `target` m/s at `acceleration` m/s².
    mutating func accelerate(to target: Double, by acceleration: Double) {
        while speed < target {
            speed = min(target, speed + acceleration / rate)
            tick()
        }
    }

    /// Goes on at the speed reached.
    mutating func cruise(for seconds: Double) {
        for _ in 0..<ticks(seconds) { tick() }
    }

    /// Slows to a stop at `deceleration` m/s²; the last fix is the first at rest.
    mutating func decelerate(by deceleration: Double) {
        while speed > 0 {
            speed = max(0, speed - deceleration / rate)
            tick()
        }
    }

    /// A drive through town: from a standstill, `stops` stops at traffic lights of the given lengths, each between
    /// two stretches at 13 m/s (47 km/h), with ordinary acceleration and braking.
    mutating func drive(stops: [Double]) {
        for stop in stops {
            accelerate(to: 13, by: 2)
            cruise(for: 25)
            decelerate(by: 2.5)
            self.stop(for: stop)
        }
        accelerate(to: 13, by: 2)
        cruise(for: 20)
    }

    private func ticks(_ seconds: Double) -> Int { Int((seconds * rate).rounded()) }

    private mutating func tick() {
        let step = 1 / rate
        along += speed * step
        let pull = exp(-step / noiseTimeConstant)
        let spread = positionNoise * (1 - pull * pull).squareRoot()
        noise = (pull * noise.east + spread * gaussian(), pull * noise.north + spread * gaussian())

        var location = Self.start.location(atOffset: LocalOffset(east: along + noise.east, north: noise.north, up: 0))
        location.timestamp = Self.startTime.addingTimeInterval(Double(samples.count) / rate)
        location.horizontalAccuracy = accuracy.map { Double.random(in: $0, using: &random) }
        if reportsSpeed {
            location.speed = speed == 0
                ? Double.random(in: 0.1...0.5, using: &random) : max(0, speed + 0.1 * gaussian())
            location.speedAccuracy = speedAccuracy.map { Double.random(in: $0, using: &random) }
        } else {
            location.fix = .twoDimensional
        }
        location.ellipsoidalAltitude = nil
        samples.append(Sample(location: location, trueSpeed: speed,
                              error: (noise.east * noise.east + noise.north * noise.north).squareRoot()))
    }

    /// A standard normal number (Box–Muller).
    private mutating func gaussian() -> Double {
        let u = Double.random(in: Double.ulpOfOne..<1, using: &random)
        let v = Double.random(in: 0..<1, using: &random)
        return (-2 * log(u)).squareRoot() * cos(2 * .pi * v)
    }
}

public import FoundationEssentials

/// Whether one receiver is standing still, judged fix by fix from its speed and the spread of its positions, as
/// CoreLocation's `CLLocationUpdate.isStationary` says it.
///
/// Each fix brings two kinds of evidence:
/// - **Speed over ground** (``Location/speed``). A speed at most ``Configuration/restingSpeed`` is evidence of rest
///   when it is certain enough: without a ``Location/speedAccuracy``, or with one that keeps speed plus accuracy
///   at most ``Configuration/movingSpeed``. A speed above the resting speed keeps the receiver from becoming
///   stationary; one above the moving speed is evidence of motion. A fix without a speed, or with a low one too uncertain, leaves it to the
///   positions.
/// - **Positions against their own accuracy.** The detector keeps an anchor: the mean of the positions since the
///   evidence of rest began, following them slowly (``Configuration/anchorTimeConstant``) once they are many, so
///   a slow drift of the fixes at rest is not motion. A fix's radius is its ``Location/horizontalAccuracy`` (about
///   95 %), or ``Configuration/defaultHorizontalAccuracy`` without one (or with one of 0), and at least
///   ``Configuration/minimumRadius``. A fix is *near* the anchor within its radius, *away* from it beyond
///   ``Configuration/leavingRadiusFactor`` radii.
///
/// Hysteresis: the receiver becomes stationary when its fixes have been near the anchor with no speed above the
/// resting speed for ``Configuration/dwell`` of receiver time and at least ``Configuration/dwellFixes`` epochs
/// (``Configuration/positionOnlyDwell`` if one of them had no certain speed). It stops being stationary on
/// evidence of motion (a speed above the moving speed, or a fix away from the anchor) on at least
/// ``Configuration/motionFixes`` epochs over ``Configuration/motionDwell``, with no fix between that says rest (a
/// speed between the resting and the moving speed neither adds to that evidence nor breaks it). A fix near the
/// anchor and slow moves the anchor and nothing else, so GNSS jitter at rest (positions wandering a few metres,
/// speeds of tenths of a metre per second) does not make it flap, while a vehicle pulling away at walking pace is
/// moving again after two fixes of a 1 Hz receiver (one second of a faster one).
///
/// Time is the receiver's (``Location/timestamp``): a fix earlier than the one
/// before, or later by more than ``Configuration/maximumGap``, starts over as ``reset()`` does. Several fixes of one
/// epoch (gpsd sends one per sentence of the receiver's cycle) count as one epoch and add no time.
///
/// Limits:
/// - Motion slower than the resting speed is rest: a vehicle creeping in a queue is stationary, and so, for a
///   while, is a slow robot. Lower ``Configuration/restingSpeed`` for a slow platform with a precise receiver.
/// - Without a certain speed, positions alone cannot tell slow motion from rest while it stays within the fixes'
///   radius: motion that covers less than about two radii in ``Configuration/positionOnlyDwell`` (a walk at
///   1.2 m/s with fixes of 6 m or worse) is judged stationary, and a receiver pulling away is seen moving only
///   ``Configuration/leavingRadiusFactor`` radii from the anchor. For receivers that send no speed error, gpsd
///   estimates one from the position errors (tens of metres per second): their fixes take the longer dwell.
/// - Accuracies are the receiver's word: positions that stray beyond ``Configuration/leavingRadiusFactor``
///   understated radii for the motion dwell end the rest.
///
/// The defaults (``Configuration/init()``): rest is a speed at most 0.6 m/s, motion one above 1 m/s; stationary
/// after 3 s and 3 epochs of rest, or 10 s when a fix had no certain speed; moving again after 1 s and 2 epochs of
/// motion; a fix without an accuracy counts as 10 m, none as less than 2 m, and one 2 radii from the anchor is
/// away; the anchor follows with a time constant of 60 s; a gap over 10 s starts over. gpsd 3.22 to 3.25 estimate
/// the speed error of a receiver that sends none (NMEA) from its position errors, so such a receiver's fixes
/// rarely have a certain speed: it turns stationary 10 receiver-seconds after it stops. Lower
/// ``Configuration/positionOnlyDwell`` to judge sooner, at the cost of taking slow motion for rest for longer.
///
/// Its state is a few numbers whatever the number of fixes: no fix allocates. No input traps.
///
/// A live timeline judges rest this way with its manager's ``LocationManager/stationaryDetection`` (as
/// ``LocationUpdate/isStationary``); a detector of your own judges any fixes:
///
/// ```swift
/// var detector = StationaryDetector()
/// for try await fix in gps.updates() {
///     if detector.update(with: fix) { print("standing still") }
/// }
/// ```
public struct StationaryDetector: Sendable, Equatable {
    /// The thresholds of the judgement; the defaults suit a vehicle or a pedestrian with a consumer receiver.
    ///
    /// ```swift
    /// var slowRobot = StationaryDetector.Configuration()
    /// slowRobot.restingSpeed = 0.1          // it drives at 0.3 m/s: that is motion
    /// slowRobot.movingSpeed = 0.2
    /// slowRobot.positionOnlyDwell = 4       // judge rest within 4 s even without a certain speed
    /// gps.manager.stationaryDetection = slowRobot
    /// ```
    public struct Configuration: Sendable, Hashable {
        /// Metres per second: a certain speed at most this is evidence of rest; above it, the receiver does not
        /// become stationary.
        public var restingSpeed = 0.6
        /// Metres per second: a speed above this is evidence of motion.
        public var movingSpeed = 1.0
        /// Seconds of receiver time the evidence of rest must hold when every fix had a certain speed.
        public var dwell: TimeInterval = 3
        /// Seconds of receiver time the evidence of rest must hold when a fix had no certain speed.
        public var positionOnlyDwell: TimeInterval = 10
        /// Epochs the evidence of rest must hold on, at least.
        public var dwellFixes = 3
        /// Seconds of receiver time the evidence of motion must hold, unbroken.
        public var motionDwell: TimeInterval = 1
        /// Epochs the evidence of motion must hold on, at least.
        public var motionFixes = 2
        /// Metres: the radius of a fix that reports no horizontal accuracy, or one of 0.
        public var defaultHorizontalAccuracy = 10.0
        /// Metres: the smallest radius, whatever accuracy a fix claims.
        public var minimumRadius = 2.0
        /// How many of its radii a fix must be from the anchor to be evidence of motion.
        public var leavingRadiusFactor = 2.0
        /// Seconds: how slowly the anchor follows the positions once it is the mean of many.
        public var anchorTimeConstant: TimeInterval = 60
        /// Seconds: a longer gap between two fixes starts over.
        public var maximumGap: TimeInterval = 10

        /// The defaults.
        public init() {}
    }

    /// The thresholds; changing them applies from the next fix.
    public var configuration: Configuration

    /// Whether the receiver is judged stationary after the fixes so far.
    public var isStationary: Bool {
        if case .stationary = phase { true } else { false }
    }

    private var phase = Phase.settling(nil)
    /// The time of the newest fix taken.
    private var lastTime: Date?

    /// A detector that has seen no fix: not stationary.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Takes the next fix of one receiver (in receiver time order); returns whether the receiver is now judged
    /// stationary.
    public mutating func update(with location: Location) -> Bool {
        let time = location.timestamp
        var step: TimeInterval = 0
        if let lastTime {
            step = time.timeIntervalSince(lastTime)
            if step < 0 || step > configuration.maximumGap {
                reset()
                step = 0
            }
        }
        let newEpoch = lastTime == nil || step > 0
        lastTime = time
        let fix = Fix(location, at: time, step: step, newEpoch: newEpoch, configuration)

        switch phase {
        case .settling(let anchor):
            settle(fix, anchor: anchor)
        case .stationary(var anchor, var leaving):
            if fix.speed == .motion || !(anchor.distance(to: fix) <= configuration.leavingRadiusFactor * fix.radius) {
                if leaving == nil {
                    leaving = Run(since: time)
                } else {
                    leaving?.extend(newEpoch: newEpoch, upTo: configuration.motionFixes)
                }
            } else if fix.speed != .notRest {
                leaving = nil
                anchor.add(fix, configuration)
            }
            if let leaving, leaving.holds(at: time, for: configuration.motionDwell, epochs: configuration.motionFixes) {
                settle(fix, anchor: nil)
            } else {
                phase = .stationary(anchor, leaving: leaving)
            }
        }
        return isStationary
    }

    /// Forgets everything (a new session, the receiver went, the fix was lost, receiver time stepped back).
    public mutating func reset() {
        phase = .settling(nil)
        lastTime = nil
    }

    /// Gathers the evidence of rest, and becomes stationary when it has held long enough.
    private mutating func settle(_ fix: Fix, anchor: Anchor?) {
        guard fix.speed == .rest || fix.speed == .unknown else {
            phase = .settling(nil)
            return
        }
        let next: Anchor
        if var gathered = anchor, gathered.distance(to: fix) <= fix.radius {
            gathered.run.extend(newEpoch: fix.newEpoch, upTo: configuration.dwellFixes)
            gathered.speedCertain = gathered.speedCertain && fix.speed == .rest
            gathered.add(fix, configuration)
            next = gathered
        } else {
            next = Anchor(fix)
        }
        let dwell = next.speedCertain ? configuration.dwell : configuration.positionOnlyDwell
        phase = next.run.holds(at: fix.time, for: dwell, epochs: configuration.dwellFixes)
            ? .stationary(next, leaving: nil) : .settling(next)
    }
}

// MARK: - Parts

extension StationaryDetector {
    private enum Phase: Sendable, Equatable {
        /// Not stationary; the evidence of rest gathered so far, if any.
        case settling(Anchor?)
        /// Stationary at an anchor; the evidence of motion so far, if any.
        case stationary(Anchor, leaving: Run?)
    }

    /// What a fix's speed says.
    private enum SpeedEvidence: Sendable, Equatable {
        /// At most the resting speed, and certain enough.
        case rest
        /// No speed, or a low one too uncertain to count.
        case unknown
        /// Above the resting speed, at most the moving speed: not rest, not yet motion.
        case notRest
        /// Above the moving speed.
        case motion
    }

    /// One fix, as the judgement sees it.
    private struct Fix {
        var coordinate: Location.Coordinate
        var time: Date
        /// Seconds since the fix before (0 for the first, or one of the same epoch).
        var step: TimeInterval
        var newEpoch: Bool
        var speed: SpeedEvidence
        /// Metres: how far from the anchor the fix may lie and still be near it.
        var radius: Double

        init(_ location: Location, at time: Date, step: TimeInterval, newEpoch: Bool, _ configuration: Configuration) {
            (coordinate, self.time, self.step, self.newEpoch) = (location.coordinate, time, step, newEpoch)
            if let speed = location.speed {
                if speed > configuration.movingSpeed {
                    self.speed = .motion
                } else if speed > configuration.restingSpeed {
                    self.speed = .notRest
                } else if let accuracy = location.speedAccuracy, !(speed + accuracy <= configuration.movingSpeed) {
                    self.speed = .unknown
                } else {
                    self.speed = .rest
                }
            } else {
                self.speed = .unknown
            }
            let accuracy = location.horizontalAccuracy.flatMap { $0 > 0 ? $0 : nil }
            radius = max(configuration.minimumRadius, accuracy ?? configuration.defaultHorizontalAccuracy)
        }
    }

    /// Evidence that has held, unbroken: since when, and on how many epochs (counted up to the number needed, so the
    /// count cannot overflow).
    private struct Run: Sendable, Equatable {
        /// What rounding of receiver times a duration may lose (10 Hz steps do not add up to whole seconds).
        static let rounding: TimeInterval = 0.001

        var since: Date
        var epochs = 1

        mutating func extend(newEpoch: Bool, upTo limit: Int) {
            if newEpoch && epochs < limit { epochs += 1 }
        }

        func holds(at time: Date, for duration: TimeInterval, epochs needed: Int) -> Bool {
            epochs >= needed && time.timeIntervalSince(since) >= duration - Self.rounding
        }
    }

    /// Where the positions gather: their mean, in metres east and north of the first of them in its tangent plane.
    private struct Anchor: Sendable, Equatable {
        /// The first position, the origin of the plane.
        var origin: Location.Coordinate
        var east = 0.0
        var north = 0.0
        /// How many positions the mean is of (counted up to a limit: beyond it the mean follows by time).
        var samples = 1
        /// How long the evidence of rest has held.
        var run: Run
        /// Whether every fix of the run had a certain speed at rest.
        var speedCertain: Bool

        init(_ fix: Fix) {
            origin = fix.coordinate
            run = Run(since: fix.time)
            speedCertain = fix.speed == .rest
        }

        /// The fix's east and north offset from the origin.
        private func offset(of fix: Fix) -> LocalOffset {
            // Both on the ellipsoid: heights (and their noise) play no part in a horizontal spread.
            Location(coordinate: fix.coordinate).offset(from: Location(coordinate: origin))
        }

        /// Metres from the anchor to the fix, horizontally; NaN for a coordinate that is not one.
        func distance(to fix: Fix) -> Double {
            let offset = offset(of: fix)
            let (east, north) = (offset.east - self.east, offset.north - self.north)
            return (east * east + north * north).squareRoot()
        }

        /// Moves the mean towards the fix: an exact mean of the first positions, then an exponential one whose
        /// weight is the time since the fix before over the time constant.
        mutating func add(_ fix: Fix, _ configuration: Configuration) {
            if samples < 1_000_000 { samples += 1 }
            let constant = configuration.anchorTimeConstant
            let byTime = constant > 0 ? min(1, fix.step / constant) : 1
            let weight = max(1 / Double(samples), byTime)
            let offset = offset(of: fix)
            east += weight * (offset.east - east)
            north += weight * (offset.north - north)
        }
    }
}

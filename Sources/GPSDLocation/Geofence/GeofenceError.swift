/// Why a ``GeofenceRegion`` could not be made: a value that cannot be true.
///
/// Switch over ``code``; new codes may be added, so include a `default` case.
///
/// ```swift
/// do {
///     _ = try GeofenceRegion(identifier: "home", center: .init(latitude: 52.52, longitude: 13.405), radius: -5)
/// } catch let error as GeofenceError where error.code == .invalidRadius {
///     print(error)   // invalid radius: a region's radius must be a finite number of metres above 0, not -5.0
/// }
/// ```
public struct GeofenceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was wrong. A struct of static members, so codes can be added without breaking a `switch` that has a
    /// `default`.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Value: String, Sendable, Hashable {
            case invalidRadius = "invalid radius"
            case invalidCenter = "invalid center"
        }

        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// The radius is not a finite number of metres above 0.
        public static let invalidRadius = Code(.invalidRadius)
        /// The centre is not a coordinate on Earth: a latitude outside -90 ... 90, a longitude outside
        /// -180 ... 180, or either not a number.
        public static let invalidCenter = Code(.invalidCenter)

        /// The code in words: `invalid radius`, `invalid center`.
        public var description: String { value.rawValue }
    }

    /// What was wrong.
    public var code: Code
    /// A sentence for people: which value, and why it was refused.
    public var message: String

    /// Makes an error; mostly for tests.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// `code: message`, e.g. `invalid center: latitude 91.0 is outside -90 ... 90`.
    public var description: String { "\(code): \(message)" }
}

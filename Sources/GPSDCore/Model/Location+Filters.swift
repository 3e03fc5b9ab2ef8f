extension Location {
    /// The delegate's and the streams' accuracy rule: a fix qualifies if its horizontal accuracy is known and
    /// at least `desiredAccuracy`; any fix qualifies when none is desired.
    package func meets(desiredAccuracy: Double?) -> Bool {
        guard let desiredAccuracy else { return true }
        return horizontalAccuracy.map { $0 <= desiredAccuracy } ?? false
    }

    /// The distance filter: whether this fix is at least `distanceFilter` metres from the last one delivered
    /// (always, with no filter or nothing delivered yet).
    package func passes(distanceFilter: Double?, since lastDelivered: Location?) -> Bool {
        guard let distanceFilter, let lastDelivered else { return true }
        return distance(from: lastDelivered) >= distanceFilter
    }
}

extension Location {
    /// The better of two fixes that both missed a request's accuracy: the more accurate, or the newer when
    /// neither is more accurate. Any fix is better than none.
    package func isBetter(than best: Location?) -> Bool {
        guard let best else { return true }
        switch (horizontalAccuracy, best.horizontalAccuracy) {
        case let (new?, old?): return new <= old
        case (.some, nil): return true
        case (nil, .some): return false
        case (nil, nil): return true
        }
    }
}

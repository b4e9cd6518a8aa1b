/// Save latencies in fixed memory, whatever the count: log-linear buckets (each power of two
/// split into 32), so percentiles are within ~1.6% of the true value, and exact min and max.
public struct LatencyHistogram: Sendable {
    private static let subBuckets = 32
    private static let subBucketBits = 5
    private var buckets = [Int](repeating: 0, count: 64 * 32)
    public private(set) var count = 0
    public private(set) var sum = 0
    public private(set) var minimum = Int.max
    public private(set) var maximum = 0

    public init() {}

    public mutating func record(_ microseconds: Int) {
        let value = max(0, microseconds)
        buckets[Self.bucket(of: value)] += 1
        count += 1
        sum += value
        minimum = min(minimum, value)
        maximum = max(maximum, value)
    }

    static func bucket(of value: Int) -> Int {
        guard value >= subBuckets else { return value }
        let magnitude = (Int.bitWidth - 1 - value.leadingZeroBitCount) - subBucketBits
        let mantissa = value >> magnitude
        return magnitude * subBuckets + mantissa
    }

    /// The middle of the values a bucket holds.
    static func representative(of bucket: Int) -> Int {
        guard bucket >= 2 * subBuckets else { return bucket }  // exact below 64 µs
        let magnitude = bucket / subBuckets - 1
        let mantissa = bucket % subBuckets + subBuckets
        let low = mantissa << magnitude
        return low + (1 << magnitude) / 2
    }

    /// The value below which `fraction` of the recorded latencies fall (0 < fraction ≤ 1).
    public func percentile(_ fraction: Double) -> Int {
        guard count > 0 else { return 0 }
        let rank = max(1, Int((fraction * Double(count)).rounded(.up)))
        var seen = 0
        for (bucket, n) in buckets.enumerated() where n > 0 {
            seen += n
            if seen >= rank { return min(maximum, max(minimum, Self.representative(of: bucket))) }
        }
        return maximum
    }

}

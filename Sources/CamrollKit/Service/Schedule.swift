import Glibc

/// `snap --every`: photos on a clock, not after a pause. Slot k is due at origin + k·period on
/// the wall clock, worked out again from the clock at every look (as fswebcam does), so that
/// the time one capture took never shifts the next, a slot missed is skipped rather than caught
/// up in a burst, and a clock step (NTP, a resume from suspend) moves the schedule with it:
/// forward, the slots passed are skipped; back, the next slot is the next one the clock shows,
/// never one an hour away.
public struct Schedule: Sendable {
    public let periodMicroseconds: Int
    /// Wall-clock time (µs since the epoch) of slot 0.
    public let origin: Int
    /// How late a slot may still be taken: half a period. Later than that, it is skipped and the
    /// next one waited for, so that every photo is near its slot.
    public var graceMicroseconds: Int { periodMicroseconds / 2 }
    /// The last slot taken or given up (nil before the first).
    public private(set) var lastSlot: Int?

    /// `aligned`: slots at whole multiples of the period on the local wall clock (`--every 1m`
    /// at :00 each minute, `--every 1h` on the hour); else slot 0 is `now`.
    public init(periodMicroseconds: Int, aligned: Bool, now: Int, utcOffsetSeconds: Int = Schedule.localUTCOffset()) {
        precondition(periodMicroseconds > 0)
        self.periodMicroseconds = periodMicroseconds
        if aligned {
            let local = now + utcOffsetSeconds * 1_000_000
            origin = now - Self.floorMod(local, periodMicroseconds)
        } else {
            origin = now
        }
    }

    public enum Step: Equatable, Sendable {
        /// Nothing due yet: look again at this wall-clock time (or sooner).
        case wait(until: Int)
        /// Take slot `slot` now; `skipped` slots before it were given up (since the last one).
        case take(slot: Int, skipped: Int)
    }

    /// What to do at wall-clock time `now`. A slot given up late is counted in the `skipped`
    /// of the next one taken; `steppedBack` is set when the clock went back by more than a
    /// period since the last look.
    public mutating func step(now: Int, steppedBack: inout Bool) -> Step {
        let current = Self.floorDiv(now - origin, periodMicroseconds)
        let due = origin + current * periodMicroseconds
        guard let last = lastSlot else {
            // The first slot: the one starting now (within a millisecond), else the next one.
            if now - due <= 1_000 { return take(current, skipped: 0) }
            lastSlot = current
            return .wait(until: due + periodMicroseconds)
        }
        if current <= last {
            if current < last {
                // The clock went back past the last slot: the schedule follows it.
                steppedBack = true
                lastSlot = current
                pendingSkips = 0
            }
            return .wait(until: origin + (lastSlot! + 1) * periodMicroseconds)
        }
        let skipped = current - last - 1 + pendingSkips
        if now - due <= graceMicroseconds { return take(current, skipped: skipped) }
        // Too late for this one as well: it is skipped too, and the next one waited for.
        lastSlot = current
        pendingSkips = skipped + 1
        return .wait(until: due + periodMicroseconds)
    }

    /// Slots given up that no slot taken has reported yet.
    public private(set) var pendingSkips = 0

    /// The wall-clock time slot `slot` is due.
    public func due(_ slot: Int) -> Int { origin + slot * periodMicroseconds }

    private mutating func take(_ slot: Int, skipped: Int) -> Step {
        lastSlot = slot
        pendingSkips = 0
        return .take(slot: slot, skipped: skipped)
    }

    static func floorDiv(_ a: Int, _ b: Int) -> Int { a >= 0 ? a / b : -((-a + b - 1) / b) }
    static func floorMod(_ a: Int, _ b: Int) -> Int { a - floorDiv(a, b) * b }

    /// This machine's offset from UTC now, in seconds (east positive).
    public static func localUTCOffset() -> Int {
        var now = time(nil)
        var parts = tm()
        guard localtime_r(&now, &parts) != nil else { return 0 }
        return parts.tm_gmtoff
    }
}

/// The wall clock, in microseconds since the epoch.
func realtimeMicroseconds() -> Int {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return Int(now.tv_sec) * 1_000_000 + Int(now.tv_nsec) / 1000
}

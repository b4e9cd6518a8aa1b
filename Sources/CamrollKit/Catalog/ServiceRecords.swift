import FoundationEssentials

/// What a service run (`snap --every`) keeps in the catalog beside its photos: its period, the
/// slots it skipped, and its events (`run_events`).
extension Catalog {
    public enum EventKind: String, Sendable {
        /// Slots given up: `count` of them before slot `slot`; `detail` says why.
        case skipped
        /// The wall clock stepped (back, or forward past slots).
        case clock
        case unplugged, reconnected
        /// Photos deleted by `--keep-*`: `count` files.
        case retention
        /// A hook that failed, timed out, or was skipped while another ran.
        case hook
        case stopped
    }

    public struct Event: Sendable {
        public var kind: EventKind
        public var at: Date
        public var slot: Int?
        public var count: Int?
        public var detail: String?

        public init(_ kind: EventKind, at: Date = Date(), slot: Int? = nil, count: Int? = nil, detail: String? = nil) {
            self.kind = kind
            self.at = at
            self.slot = slot
            self.count = count
            self.detail = detail
        }
    }

    public func recordEvent(_ event: Event, run: Int) throws {
        try userErrors {
            try database.prepare("INSERT INTO run_events(run_id, at, kind, slot, count, detail) VALUES (?, ?, ?, ?, ?, ?)")
                .bind(.int(run), .text(Timestamp.iso8601(event.at)), .text(event.kind.rawValue), .optional(event.slot),
                      .optional(event.count), .optional(event.detail))
                .run()
        }
    }

    /// The run's period and the slots it has skipped so far.
    public func recordSchedule(run: Int, everyMicroseconds: Int, skippedSlots: Int) throws {
        try userErrors {
            try database.prepare("UPDATE runs SET every_us = ?, skipped_slots = ? WHERE id = ?")
                .bind(.int(everyMicroseconds), .int(skippedSlots), .int(run)).run()
        }
    }
}

import Synchronization

/// A value being computed on another thread; `value()` waits for it (or its error).
final class Pending<Value>: @unchecked Sendable {
    private let condition = Condition()
    // Set once, under `condition`.
    private var result: Result<Value, Error>?
    /// Stored (releasing) once `result` is set, which it never is again: from then on `result` is
    /// read without the lock. Every save of a run asks for its frame's capture row.
    private let settled = Atomic<Bool>(false)

    /// Computed by `body` on a thread of its own.
    convenience init(_ body: @escaping @Sendable () throws -> Value) {
        self.init()
        startThread { [self] in settle(Result { try body() }) }
    }

    /// Computed by whoever calls `settle`: a job on a thread that already exists.
    init() {}

    func settle(_ outcome: Result<Value, Error>) {
        condition.withLock {
            guard result == nil else { return }  // the first outcome stands
            result = outcome
            settled.store(true, ordering: .releasing)
            condition.broadcast()
        }
    }

    /// The value if it is there already; nil while it is being computed, or if that failed.
    var settledValue: Value? {
        condition.withLock { try? result?.get() }
    }

    func value() throws -> Value {
        if settled.load(ordering: .acquiring) { return try result!.get() }
        return try condition.withLock {
            while result == nil { condition.wait() }
            return result!
        }.get()
    }
}

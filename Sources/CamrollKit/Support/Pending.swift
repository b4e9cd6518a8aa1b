/// A value being computed on a thread of its own; `value()` waits for it (or its error).
final class Pending<Value>: @unchecked Sendable {
    private let condition = Condition()
    // Guarded by `condition`; set once.
    private var result: Result<Value, Error>?

    init(_ body: @escaping @Sendable () throws -> Value) {
        startThread { [self] in
            let outcome = Result { try body() }
            condition.withLock {
                result = outcome
                condition.broadcast()
            }
        }
    }

    func value() throws -> Value {
        try condition.withLock {
            while result == nil { condition.wait() }
            return result!
        }.get()
    }
}

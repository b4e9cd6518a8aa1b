import Dispatch

/// A value being computed on another thread; `value()` waits for it (or its error).
final class Pending<Value>: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    // Written once by the worker before `done` is signalled; read only after waiting for it.
    private var result: Result<Value, Error>?

    init(_ body: @escaping @Sendable () throws -> Value) {
        DispatchQueue.global().async {
            self.result = Result { try body() }
            self.done.signal()
        }
    }

    func value() throws -> Value {
        done.wait()
        done.signal()  // so that a later call returns at once too
        return try result!.get()
    }
}

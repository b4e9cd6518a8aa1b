import Glibc

/// A mutex for state that several properties share (Synchronization's Mutex guards one value).
final class Lock: @unchecked Sendable {
    /// Not private: a Condition waits on it.
    let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

    init() { pthread_mutex_init(mutex, nil) }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}

/// One value and the lock that guards it: Synchronization's `Mutex`, on a pthread mutex.
/// ThreadSanitizer (`make race`) knows the ordering pthread's mutex gives, but not that of the
/// futex under `Mutex` on Linux, and reports a `Mutex`'s value used from two threads as a race:
/// with these, a report is a real one.
final class Locked<Value: ~Copyable>: @unchecked Sendable {
    private let lock = Lock()
    private var value: Value

    init(_ value: consuming Value) { self.value = value }

    func withLock<T, E: Error>(_ body: (inout Value) throws(E) -> T) throws(E) -> T {
        try lock.withLock { () throws(E) -> T in try body(&value) }
    }
}

import Glibc

/// A lock and a condition variable that waits on the monotonic clock (a clock change does not
/// move a deadline).
final class Condition: @unchecked Sendable {
    private let lock = Lock()
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deallocate()
    }

    func withLock<T>(_ body: () throws -> T) rethrows -> T { try lock.withLock(body) }

    /// Inside `withLock` only: waits for a `broadcast` (or a spurious wake-up: callers loop).
    func wait() { pthread_cond_wait(condition, lock.mutex) }

    /// Inside `withLock` only: as `wait`, but no later than `deadline` (monotonicMicroseconds).
    func wait(until deadline: Int) {
        var time = timespec(tv_sec: deadline / 1_000_000, tv_nsec: (deadline % 1_000_000) * 1000)
        pthread_cond_timedwait(condition, lock.mutex, &time)
    }

    func broadcast() { pthread_cond_broadcast(condition) }
}

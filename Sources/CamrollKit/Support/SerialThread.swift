import CLinux
import Glibc

/// A thread of its own that runs jobs one at a time, in the order they fall due: what the
/// catalog needs from a serial queue (`async`, `async(after:)`, `sync`), without Dispatch.
/// libdispatch's worker pool, timers and event sources are several hundred functions that run
/// once for a one-photo process, and code run once is what a cold start pays for on a small
/// board or an emulator (see Benchmarks/startup.py).
final class SerialThread: @unchecked Sendable {
    private final class Job {
        let due: Int
        let body: () -> Void
        init(due: Int, body: @escaping () -> Void) {
            self.due = due
            self.body = body
        }
    }

    /// What the thread and its owner share; the thread holds it, not the owner, so that the
    /// owner's `deinit` can stop the thread.
    private final class Shared: @unchecked Sendable {
        let condition = Condition()
        // Guarded by `condition`: jobs in order of `due`, first come first among equals.
        var jobs: [Job] = []
        var stopping = false
    }

    private let shared = Shared()
    /// Nil when no thread could be had: then every job runs at once on its caller's.
    private let thread: pthread_t?

    /// `name` shows in `top -H`, `ps -L` and perf (at most 15 bytes).
    init(name: String) {
        thread = spawnThread { [shared] in
            _ = clinux_name_this_thread(name)
            SerialThread.serve(shared)
        }
    }

    /// Lets the thread finish the jobs it was given, all of them now, and waits for it.
    deinit {
        guard let thread else { return }
        shared.condition.withLock {
            shared.stopping = true
            shared.condition.broadcast()
        }
        // The last reference may go in one of the thread's own jobs: it must not wait for itself.
        if pthread_equal(pthread_self(), thread) != 0 {
            pthread_detach(thread)
        } else {
            pthread_join(thread, nil)
        }
    }

    /// Runs `body` on the thread once `delayMicroseconds` have passed and the jobs due before
    /// it have run.
    func async(afterMicroseconds delayMicroseconds: Int = 0, _ body: @escaping @Sendable () -> Void) {
        guard thread != nil else { return body() }  // no thread to be had: now, on this one
        enqueue(Job(due: monotonicMicroseconds() + delayMicroseconds, body: body))
    }

    /// Runs `body` on the thread after the jobs already due, and returns what it returns.
    func sync<T>(_ body: () throws -> T) rethrows -> T {
        guard let thread, pthread_equal(pthread_self(), thread) == 0 else { return try body() }
        return try withoutActuallyEscaping(body) { body in
            // The job lets go of `body` before this call returns (withoutActuallyEscaping
            // checks that nothing still holds it), so it reaches `body` through a box it empties.
            let call = SynchronousCall(body)
            enqueue(Job(due: monotonicMicroseconds()) {
                let outcome = Result { try call.body!() }
                call.done.withLock {
                    call.body = nil
                    call.result = outcome
                    call.done.broadcast()
                }
            })
            return try call.done.withLock {
                while call.result == nil { call.done.wait() }
                return call.result!
            }.get()
        } as T
    }

    private final class SynchronousCall<T>: @unchecked Sendable {
        var body: (() throws -> T)?
        var result: Result<T, Error>?
        let done = Condition()
        init(_ body: @escaping () throws -> T) { self.body = body }
    }

    private func enqueue(_ job: Job) {
        shared.condition.withLock {
            let index = shared.jobs.lastIndex { $0.due <= job.due }.map { $0 + 1 } ?? 0
            shared.jobs.insert(job, at: index)
            shared.condition.broadcast()
        }
    }

    private static func serve(_ shared: Shared) {
        while true {
            let job: Job? = shared.condition.withLock {
                while true {
                    guard let first = shared.jobs.first else {
                        if shared.stopping { return nil }
                        shared.condition.wait()
                        continue
                    }
                    if shared.stopping || first.due <= monotonicMicroseconds() {
                        return shared.jobs.removeFirst()
                    }
                    shared.condition.wait(until: first.due)
                }
            }
            guard let job else { return }
            job.body()
        }
    }
}

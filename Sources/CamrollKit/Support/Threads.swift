import Glibc

/// Runs `body(0)` … `body(count - 1)` on `count` threads of their own and returns when all have
/// finished. Not Dispatch's concurrentPerform: that runs no more at once than there are CPUs,
/// and `--jobs 4` on two cores must still be four writers waiting on the device at once.
func runOnThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    final class Work: @unchecked Sendable {
        let index: Int
        let body: @Sendable (Int) -> Void
        init(index: Int, body: @escaping @Sendable (Int) -> Void) {
            self.index = index
            self.body = body
        }
    }
    var threads: [pthread_t] = []
    for index in 0..<count {
        let work = Unmanaged.passRetained(Work(index: index, body: body)).toOpaque()
        var thread = pthread_t()
        let started = pthread_create(&thread, nil, { context in
            let work = Unmanaged<Work>.fromOpaque(context!).takeRetainedValue()
            work.body(work.index)
            return nil
        }, work)
        if started == 0 {
            threads.append(thread)
        } else {
            // No thread to be had: this one does that share of the work itself.
            Unmanaged<Work>.fromOpaque(work).takeRetainedValue().body(index)
        }
    }
    for thread in threads { pthread_join(thread, nil) }
}

/// Runs `body` on a new detached thread (or, when no thread can be had, now on this one).
func startThread(_ body: @escaping @Sendable () -> Void) {
    final class Work: @unchecked Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    let work = Unmanaged.passRetained(Work(body)).toOpaque()
    var thread = pthread_t()
    let started = pthread_create(&thread, nil, { context in
        Unmanaged<Work>.fromOpaque(context!).takeRetainedValue().body()
        return nil
    }, work)
    if started == 0 {
        pthread_detach(thread)
    } else {
        Unmanaged<Work>.fromOpaque(work).takeRetainedValue().body()
    }
}

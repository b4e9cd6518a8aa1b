import Glibc

/// A new thread running `body`, to be joined or detached; nil when no thread can be had.
func spawnThread(_ body: @escaping @Sendable () -> Void) -> pthread_t? {
    final class Work: @unchecked Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    let work = Unmanaged.passRetained(Work(body)).toOpaque()
    var thread = pthread_t()
    let status = pthread_create(&thread, nil, { context in
        Unmanaged<Work>.fromOpaque(context!).takeRetainedValue().body()
        return nil
    }, work)
    guard status == 0 else {
        Unmanaged<Work>.fromOpaque(work).release()
        return nil
    }
    return thread
}

/// Runs `body(0)` … `body(count - 1)` on `count` threads of their own and returns when all have
/// finished. Not Dispatch's concurrentPerform: that runs no more at once than there are CPUs,
/// and `--jobs 4` on two cores must still be four writers waiting on the device at once.
func runOnThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    var threads: [pthread_t] = []
    for index in 0..<count {
        if let thread = spawnThread({ body(index) }) {
            threads.append(thread)
        } else {
            // No thread to be had: this one does that share of the work itself.
            body(index)
        }
    }
    for thread in threads { pthread_join(thread, nil) }
}

/// Runs `body` on a new detached thread (or, when no thread can be had, now on this one).
func startThread(_ body: @escaping @Sendable () -> Void) {
    if let thread = spawnThread(body) {
        pthread_detach(thread)
    } else {
        body()
    }
}

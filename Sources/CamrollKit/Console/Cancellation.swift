import CLinux
import FoundationEssentials
import Glibc
import Synchronization

/// Set once by the first SIGINT or SIGTERM; the work loops check it between steps.
public final class Cancellation: Sendable {
    private let signalNumber = Atomic<Int32>(0)

    public init() {}

    public var isCancelled: Bool { signalNumber.load(ordering: .relaxed) != 0 }

    /// The signal that cancelled the work, if one did.
    public var signal: Int32? {
        let value = signalNumber.load(ordering: .relaxed)
        return value == 0 ? nil : value
    }

    public func cancel(signal: Int32) {
        _ = signalNumber.compareExchange(expected: 0, desired: signal, ordering: .relaxed)
    }
}

/// SIGINT, SIGTERM and SIGHUP (and SIGWINCH) for the whole process, from its first instruction
/// to its exit.
///
/// `start()` runs first thing in `main`: it blocks these signals, so every thread started later
/// inherits the block and a signal can never be delivered to a thread that ignores it; then one
/// thread takes them with `sigwaitinfo`. A signal that arrives before that thread runs stays
/// pending and is taken as soon as it does: none is lost, however early (one exception below).
///
/// SIGHUP the process was started with ignored stays ignored: that is how `nohup` asks for a
/// command to outlive its terminal. SIGINT is taken even when it was started ignored, as a shell
/// without job control starts every `cmd &` of a script: such a script's `kill -INT` is how it
/// stops a run, and a run that ignored it would go on saving until the disk was full. (Only a
/// SIGINT that comes before `start()` is lost then: the kernel discards an ignored signal.)
///
/// What a signal does depends on what the process is doing:
/// - outside a cancellable stretch (parsing, listing): exit at once, 130 or 143, as the default
///   action would;
/// - inside one (`beginCancellable`): the first signal sets `cancellation`, and the work stops
///   after its current step; a second one runs the stretch's `onSecondSignal` (which must put
///   the catalog in order without waiting for the work) and exits.
public enum SignalWatcher {
    public static let cancellation = Cancellation()

    private struct Stretch {
        var onSecondSignal: (@Sendable (Int32) -> Void)?
    }

    private static let stretch = Locked<Stretch?>(nil)
    private static let started = Atomic<Bool>(false)
    /// SIGHUP: the terminal went away (or someone asks for a stop): treated as SIGTERM is.
    /// SIGWINCH only counts window changes, for whatever draws to fit the terminal.
    static let handled: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGWINCH]
    /// Whether SIGHUP is taken: not where the process was started with it ignored. Read once,
    /// in `start()`, before anything changes a disposition.
    private static let takesHangUp = clinux_signal_is_ignored(SIGHUP) == 0
    private static let windowChangeCount = Atomic<Int>(0)
    /// Run before any exit a signal causes: gives the terminal back (raw mode, alternate
    /// screen) when a full-screen view has taken it.
    private static let beforeExit = Locked<(@Sendable () -> Void)?>(nil)

    /// How many times the terminal window changed size (SIGWINCH) since the start.
    public static var windowChanges: Int { windowChangeCount.load(ordering: .relaxed) }

    public static func setBeforeExit(_ action: (@Sendable () -> Void)?) {
        beforeExit.withLock { $0 = action }
    }

    /// Blocks the handled signals and starts the thread that takes them. Call before any other
    /// thread exists; later calls do nothing.
    public static func start() {
        guard started.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { return }
        var set = signalSet()
        pthread_sigmask(SIG_BLOCK, &set, nil)
        var thread = pthread_t()
        let created = pthread_create(&thread, nil, { _ in SignalWatcher.takeSignals() }, nil)
        precondition(created == 0, "cannot start the signal thread")
        pthread_detach(thread)
    }

    /// From now on the first signal cancels instead of exiting. `onSecondSignal` runs on the
    /// signal thread, before the exit that follows it.
    public static func beginCancellable(onSecondSignal: (@Sendable (Int32) -> Void)? = nil) -> Cancellation {
        stretch.withLock { $0 = Stretch(onSecondSignal: onSecondSignal) }
        return cancellation
    }

    /// Replaces what a second signal does (the saver knows what to close only once it runs).
    public static func setSecondSignalAction(_ action: (@Sendable (Int32) -> Void)?) {
        stretch.withLock { current in
            if current != nil { current?.onSecondSignal = action }
        }
    }

    static func exitStatus(for signal: Int32) -> Int32 { 128 + signal }

    private static func signalSet() -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        // Not a filtered copy of `handled`: with that new array made at start, ~930 more blocks
        // of the Swift runtime's code ran in every process, which a one-photo process pays for
        // under qemu (make bench-startup: the runtime's 4 124 blocks, 3 195 without it).
        for number in handled where number != SIGHUP || takesHangUp { sigaddset(&set, number) }
        return set
    }

    private static func takeSignals() -> Never {
        var set = signalSet()
        while true {
            let number = sigwaitinfo(&set, nil)
            if number < 0 { continue }  // EINTR
            handle(number)
        }
    }

    private static func handle(_ number: Int32) {
        if number == SIGWINCH {
            windowChangeCount.add(1, ordering: .relaxed)
            return
        }
        // The lock is held while the second signal's action runs, so that the work cannot
        // leave its stretch (and, say, print a summary) halfway through it.
        stretch.withLock { current in
            guard let current else { exitNow(number) }
            if !cancellation.isCancelled {
                cancellation.cancel(signal: number)
                return
            }
            current.onSecondSignal?(number)
            exitNow(number)
        }
    }

    private static func exitNow(_ number: Int32) -> Never {
        // Taken out of the lock first: the action (FullScreen.restore) clears itself through it.
        let action = beforeExit.withLock { $0 }
        action?()
        // Said, as the default action would not: an exit 130 with nothing on stderr reads as a
        // crash in a log. Written directly: the console's lock may be held by the thread stopped.
        let name = number == SIGINT ? "SIGINT" : number == SIGTERM ? "SIGTERM" : number == SIGHUP ? "SIGHUP" : "signal \(number)"
        let message = Array("camroll: stopped by \(name)\n".utf8)
        _ = message.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
        _exit(exitStatus(for: number))
    }
}

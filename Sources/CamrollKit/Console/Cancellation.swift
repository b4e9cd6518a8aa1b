import Dispatch
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

/// Routes SIGINT and SIGTERM to a `Cancellation`. The first one asks the work to stop after the
/// current step; a second one removes any named temporary file and exits at once (130 or 143).
public final class SignalWatcher {
    private var sources: [DispatchSourceSignal] = []
    private let queue = DispatchQueue(label: "camroll.signals")

    public init(cancellation: Cancellation, onFirstSignal: @escaping @Sendable (Int32) -> Void = { _ in }) {
        for number in [SIGINT, SIGTERM] {
            // Ignore the default action so the dispatch source, not the kernel, handles it.
            Glibc.signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { [source] in
                // Signals that arrive close together are coalesced into one event.
                if cancellation.isCancelled || source.data > 1 {
                    PendingTemporaryFile.removeAndExit(status: 128 + number)
                }
                cancellation.cancel(signal: number)
                onFirstSignal(number)
            }
            source.resume()
            sources.append(source)
        }
    }

    deinit {
        for source in sources { source.cancel() }
    }
}

import CLibraryLoader
import Glibc

/// systemd's notification protocol for a `Type=notify` unit: READY=1 once the first photo is
/// saved, WATCHDOG=1 at each slot, STATUS= lines, STOPPING=1 at the end. Through libsystemd's
/// `sd_notify`, loaded only when systemd asked for notifications (NOTIFY_SOCKET is set): camroll
/// does not need libsystemd to run anywhere else. Every call is a no-op without it.
final class ServiceNotifier: @unchecked Sendable {
    private typealias Notify = @convention(c) (Int32, UnsafePointer<CChar>?) -> Int32
    private let notify: Notify?
    /// Why notifications were asked for and cannot be sent (libsystemd missing), once.
    let problem: String?

    init(environment: [String: String]) {
        guard let socket = environment["NOTIFY_SOCKET"], !socket.isEmpty else {
            notify = nil
            problem = nil
            return
        }
        guard let library = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL), let symbol = dlsym(library, "sd_notify") else {
            notify = nil
            problem = "NOTIFY_SOCKET is set but libsystemd.so.0 cannot be loaded: systemd is not told the service is ready"
            return
        }
        notify = unsafeBitCast(symbol, to: Notify.self)
        problem = nil
    }

    var isActive: Bool { notify != nil }

    func send(_ state: String) {
        guard let notify else { return }
        _ = state.withCString { notify(0, $0) }
    }

    func ready(status: String) { send("READY=1\nSTATUS=\(status)") }
    func watchdog(status: String) { send("WATCHDOG=1\nSTATUS=\(status)") }
    func stopping(status: String) { send("STOPPING=1\nSTATUS=\(status)") }
}

import Glibc

/// How camroll starts another program (a service's hook, a terminal query). camroll blocks the
/// signals its signal thread takes (SignalWatcher) and ignores SIGPIPE, and a child inherits
/// both across exec; it gets no signal blocked, and those and SIGPIPE at their defaults
/// (SIGXFSZ, which camroll ignores too, stays ignored). With `ownGroup`, a process group of its own, so that a timeout can kill all it
/// started and a Ctrl-C at the terminal reaches camroll alone.
enum ChildProcess {
    static func withSpawnAttributes<Result>(
        ownGroup: Bool, _ body: (UnsafePointer<posix_spawnattr_t>) -> Result
    ) -> Result {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGWINCH] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF
        if ownGroup {
            posix_spawnattr_setpgroup(&attributes, 0)
            flags |= POSIX_SPAWN_SETPGROUP
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))
        return body(&attributes)
    }
}

import CLinux
import Glibc

/// Proof that a run's writer is still at work: a lock on byte `run id` of `CATALOG.runs-lock`,
/// taken before the run's row is committed and held until the writer's process ends, however
/// it ends (the kernel drops it on exit, crash or SIGKILL).
///
/// `verify --repair` closes a `running` run only when nobody holds its byte. Unlike a PID, the
/// lock cannot be mistaken: it holds across PID namespaces, renamed binaries and reused PIDs.
/// It is an open-file-description lock (F_OFD_SETLK), in a file of its own: POSIX locks on the
/// catalog itself would be dropped by SQLite's own close() of any descriptor to that file.
final class RunLock {
    private let fd: Int32

    static func path(catalog: String) -> String { catalog + ".runs-lock" }

    /// Opens (creating) the catalog's lock file.
    init(catalog: String) throws {
        let path = Self.path(catalog: catalog)
        fd = retryingOnInterrupt { open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o644) }
        guard fd >= 0 else {
            let error = SystemError("open", path: path)
            throw CamrollError(error.outputExitCode, "cannot open the catalog's lock file \(path): \(error.reason)")
        }
    }

    deinit { close(fd) }

    /// Takes run `id`'s byte for as long as this lock file stays open: the life of the catalog
    /// connection, which in camroll is the life of the process.
    func hold(run id: Int) throws {
        guard clinux_ofd_lock_byte(fd, Int64(id)) == 0 else {
            throw CamrollError(.unavailable, "run \(id) is already held by another process: \(SystemError("fcntl").reason)")
        }
    }

    /// Byte 0, which no run has (their ids start at 1): held, shared, by every `delete` at work,
    /// so that `verify --repair` leaves the rows a live delete has marked `deleting` to it and
    /// finishes only those of a delete that was stopped.
    static let deletionByte = 0

    /// Takes a share of the deletion byte for as long as this lock stays alive (true).
    @discardableResult
    func holdForDeletion() -> Bool { clinux_ofd_share_byte(fd, Int64(Self.deletionByte)) == 0 }

    /// Whether a delete in another process holds a share of the deletion byte. Asked through
    /// this lock's own open file, so that this process's share does not count.
    func anotherDeletionIsAtWork() -> Bool { clinux_ofd_byte_is_locked(fd, Int64(Self.deletionByte)) == 1 }

    /// Takes run `id`'s byte if no one holds it (true), for as long as this lock stays alive.
    func tryHold(run id: Int) -> Bool { clinux_ofd_lock_byte(fd, Int64(id)) == 0 }

    /// Whether some process holds run `id`'s byte (a share of it too). When the lock file
    /// cannot be read, the run is taken to be live: repair must never close a run that may
    /// still be writing. (`run: deletionByte`: whether a delete is at work.)
    static func isHeld(run id: Int, catalog: String) -> Bool {
        let path = Self.path(catalog: catalog)
        let fd = retryingOnInterrupt { open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC) }
        if fd < 0 { return errno != ENOENT }
        defer { close(fd) }
        return clinux_ofd_byte_is_locked(fd, Int64(id)) != 0
    }
}

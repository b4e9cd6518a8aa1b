import CBusErrors
import CLinux
import Glibc

/// Room kept for the catalog while a run fills the file system it is on — a fill, or a run
/// whose files may not fit: the saving ends where not one more byte fits, and the catalog still
/// has rows to commit, the run to close and its log to checkpoint; after it, what is left of
/// that room lets `delete` and `verify --repair` write theirs. The space is held by a file that
/// has no name (O_TMPFILE, or one unlinked as soon as it is made where the file system has no
/// such files) and given back, emptied and closed, when the saving ends (or by the SIGBUS
/// handler, for a mapped file that needs it) — or by the kernel, with the process's
/// descriptors, when the process dies: nothing of it is left on the disk under a name.
final class SpaceReserve {
    let bytes: Int

    /// Room for the rows not yet committed when the saving ends and for the pages of SQLite's
    /// log not yet copied into the main file, which that copy then adds to it: a file's row
    /// takes its path and ~160 bytes, its path again in the index of paths, and each page is
    /// written twice (log, main file) — three times that for each file the run can make, to
    /// spare (a 2384-file run with 70-byte paths took 1.36 MB of the 1.2 MB kept at 512 bytes
    /// a file, and its last copy into the main file failed), 1 to 8 MB (the log is copied back
    /// every 4 MB, which bounds what is pending); or half of what is `free` where that is less,
    /// but not less than `least`. Nil where even that is not free: the run has no room to record
    /// a file in. `pathBytes`: the length of a file's path.
    static func size(files: Int, pathBytes: Int, free: Int) -> Int? {
        let perFile = 3 * (2 * pathBytes + 160)
        let wanted = min(8 << 20, max(1 << 20, min(files, 1 << 20) * perFile))
        let size = min(wanted, max(least, free / 2))
        return size <= free ? size : nil
    }

    /// The least a fill's catalog needs kept: the WAL frames of one commit of a small fill's
    /// rows (whole 4 kB pages of the table and its indexes) and the pages the checkpoint then
    /// adds to the main file, with room to spare.
    static let least = 256 << 10

    /// Nil where the room cannot be had (the file system already too full).
    init?(in directory: String, bytes: Int) {
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directoryFD >= 0 else { return nil }
        defer { close(directoryFD) }
        var fd = retryingOnInterrupt { clinux_open_unnamed(directoryFD, 0o600) }
        if fd < 0 {
            let name = ".camroll-reserve-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            fd = retryingOnInterrupt { openat(directoryFD, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600) }
            guard fd >= 0 else { return nil }
            unlinkat(directoryFD, name, 0)
        }
        // posix_fallocate writes a byte a block where the file system cannot allocate (FAT).
        // Kept where the SIGBUS handler can give it back (one room in a process at a time).
        guard posix_fallocate(fd, 0, off_t(bytes)) == 0, cbuserrors_keep_room(fd) == 0 else {
            close(fd)
            return nil
        }
        self.bytes = bytes
    }

    /// Gives the room back (where a SIGBUS has not already).
    func release() {
        cbuserrors_give_room_back()
    }

    /// A write into a file mapped from a full file system — SQLite's WAL index on btrfs, which
    /// writes every change anew — found no room, and the SIGBUS handler gave this room back for
    /// it (CBusErrors): the file system is full, and the saving must end.
    var givenBackForAMappedFile: Bool { cbuserrors_room_was_given_back() != 0 }

    deinit { release() }
}

/// SIGBUS: a page of a file mapped into memory could not be had — SQLite's WAL index on a full
/// btrfs, or on a card pulled out. The handler (CBusErrors) gives back the room kept for the
/// catalog, where there is one, and lets the write try again; otherwise it says which file and
/// exits 74.
public enum MappedFileErrors {
    public static func install() { _ = cbuserrors_install() }
}

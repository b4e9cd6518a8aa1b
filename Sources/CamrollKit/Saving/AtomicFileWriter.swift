import CLinux
import Glibc
import Synchronization

/// Writes files so that a final name only ever holds a complete file.
///
/// Without `--overwrite` the bytes go to an unnamed O_TMPFILE inode in the target directory,
/// which `linkat` then names: linking fails if the name exists (so nothing is ever replaced, with
/// no check-then-write race), and a write cut short by a crash or SIGKILL leaves no file at all.
/// Where O_TMPFILE is unsupported (some file systems) or `--overwrite` is asked for, a named
/// temporary file in the same directory is renamed into place instead.
public final class AtomicFileWriter {
    public let overwrite: Bool
    public let sync: Bool
    private var useTemporaryInode: Bool
    private var preparedDirectory: String?
    private var preparedDirectoryFD: Int32 = -1

    public init(overwrite: Bool, sync: Bool) {
        self.overwrite = overwrite
        self.sync = sync
        // linkat needs /proc/self/fd to name an O_TMPFILE inode without CAP_DAC_READ_SEARCH.
        self.useTemporaryInode = !overwrite && access("/proc/self/fd", X_OK) == 0
    }

    deinit {
        if preparedDirectoryFD >= 0 { close(preparedDirectoryFD) }
    }

    /// Writes `pieces`, one after another, as the file at absolute `path`.
    public func write(_ pieces: [UnsafeRawBufferPointer], to path: String) throws {
        let slash = path.lastIndex(of: "/") ?? path.startIndex
        let directory = slash == path.startIndex ? "/" : String(path[..<slash])
        try prepare(directory: directory)

        if useTemporaryInode {
            let fd = retryingOnInterrupt { open(directory, CLINUX_O_TMPFILE | O_WRONLY | O_CLOEXEC, 0o644) }
            if fd >= 0 {
                try writeAndLink(fd: fd, pieces: pieces, path: path)
                return
            }
            let error = SystemError("open", path: directory)
            guard [EOPNOTSUPP, EISDIR, EINVAL, ENOENT].contains(error.errno) else {
                throw Self.userError(error, path: path)
            }
            useTemporaryInode = false  // this file system has no O_TMPFILE: name the temp file
        }
        try writeAndRename(pieces: pieces, path: path, directory: directory)
    }

    private func writeAndLink(fd: Int32, pieces: [UnsafeRawBufferPointer], path: String) throws {
        defer { close(fd) }
        try writeAll(fd: fd, pieces: pieces, path: path)
        if sync, fsync(fd) != 0 { throw Self.userError(SystemError("fsync", path: path), path: path) }
        let linked = retryingOnInterrupt {
            linkat(AT_FDCWD, "/proc/self/fd/\(fd)", AT_FDCWD, path, CLINUX_AT_SYMLINK_FOLLOW)
        }
        if linked != 0 { throw Self.userError(SystemError("link", path: path), path: path) }
        try syncDirectory(path: path)
    }

    private func writeAndRename(pieces: [UnsafeRawBufferPointer], path: String, directory: String) throws {
        let name = path[path.index(after: path.lastIndex(of: "/")!)...]
        let temporary = "\(directory)/.\(name).camroll-\(getpid()).tmp"
        PendingTemporaryFile.set(temporary)
        defer { PendingTemporaryFile.set(nil) }
        let fd = retryingOnInterrupt { open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644) }
        if fd < 0 { throw Self.userError(SystemError("open", path: temporary), path: path) }
        var named = false
        defer { if !named { unlink(temporary) } }
        do {
            defer { close(fd) }
            try writeAll(fd: fd, pieces: pieces, path: path)
            if sync, fsync(fd) != 0 { throw Self.userError(SystemError("fsync", path: path), path: path) }
        }
        let renamed: Int32
        if overwrite {
            renamed = rename(temporary, path)
        } else {
            var status = clinux_renameat2_noreplace(AT_FDCWD, temporary, AT_FDCWD, path)
            if status != 0 && errno == EINVAL {
                // No RENAME_NOREPLACE here: link() refuses an existing name just the same.
                status = link(temporary, path)
                if status == 0 { unlink(temporary) }
            }
            renamed = status
        }
        if renamed != 0 { throw Self.userError(SystemError("rename", path: path), path: path) }
        named = true
        try syncDirectory(path: path)
    }

    private func writeAll(fd: Int32, pieces: [UnsafeRawBufferPointer], path: String) throws {
        for piece in pieces {
            var offset = 0
            while offset < piece.count {
                let written = retryingOnInterrupt { Glibc.write(fd, piece.baseAddress! + offset, piece.count - offset) }
                if written < 0 { throw Self.userError(SystemError("write", path: path), path: path) }
                offset += written
            }
        }
    }

    private func prepare(directory: String) throws {
        guard directory != preparedDirectory else { return }
        do {
            try Directories.create(directory)
        } catch let error as SystemError {
            throw CamrollError(
                .cannotCreate, "cannot create directory \(error.path ?? directory): \(error.reason)")
        }
        if access(directory, W_OK) != 0 {
            throw CamrollError(.cannotCreate, "cannot write to directory \(directory): \(SystemError("access").reason)")
        }
        if preparedDirectoryFD >= 0 { close(preparedDirectoryFD) }
        preparedDirectoryFD = sync ? open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1
        preparedDirectory = directory
    }

    /// With `--fsync`, a file counts as saved only once its directory entry is on disk too.
    private func syncDirectory(path: String) throws {
        guard sync, preparedDirectoryFD >= 0 else { return }
        if fsync(preparedDirectoryFD) != 0 {
            throw Self.userError(SystemError("fsync", path: preparedDirectory), path: path)
        }
    }

    static func userError(_ error: SystemError, path: String) -> CamrollError {
        switch error.errno {
        case EEXIST:
            return CamrollError(
                .cannotCreate, "\(path) already exists",
                hint: "Use --overwrite to replace it, or a -o template with {seq}, {uuid} or {time}.")
        case ENOSPC:
            return CamrollError(.ioError, "no space left on device while saving \(path)")
        case EDQUOT:
            return CamrollError(.ioError, "disk quota exceeded while saving \(path)")
        case EFBIG:
            return CamrollError(.ioError, "file too large: \(path)")
        default:
            return CamrollError(error.outputExitCode, "cannot save \(path): \(error)")
        }
    }
}

/// The named temporary file being written, if any, so that a second Ctrl-C, which exits at
/// once, can remove it first.
public enum PendingTemporaryFile {
    private static let path = Mutex<String?>(nil)

    static func set(_ value: String?) { path.withLock { $0 = value } }

    /// Called from the signal path just before `_exit`.
    public static func remove() {
        path.withLock { if let p = $0 { unlink(p) } }
    }
}

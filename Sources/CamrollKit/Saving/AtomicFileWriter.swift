import CLinux
import Glibc
import Synchronization

/// Writes files so that a final name only ever holds a complete file: the bytes go to a
/// temporary name in the target directory (`.NAME.camroll-PID.tmp`), which is then renamed into
/// place. Without `--overwrite` the rename is `RENAME_NOREPLACE`, so an existing file is never
/// replaced and there is no check-then-write race.
///
/// (O_TMPFILE + linkat would leave nothing at all behind after SIGKILL, but on ext4 it costs
/// ~0.3 ms a file, several times the rest of a save; `verify --repair` removes leftover
/// temporary files instead, which the naming makes unambiguous.)
public final class AtomicFileWriter {
    public let overwrite: Bool
    public let sync: Bool
    private var preparedDirectory: String?
    private var preparedDirectoryFD: Int32 = -1

    private static let pid = getpid()

    /// `.NAME.camroll-PID.tmp`: hidden, and saying which process left it.
    public static func temporaryName(for name: Substring) -> String {
        ".\(name).camroll-\(pid).tmp"
    }

    /// Matches the temporary files process `pid` writes (for `verify --repair`).
    public static func temporaryNamePattern(pid: Int32) -> String {
        "^\\..+\\.camroll-\(pid)\\.tmp$"
    }

    public init(overwrite: Bool, sync: Bool) {
        self.overwrite = overwrite
        self.sync = sync
    }

    deinit {
        if preparedDirectoryFD >= 0 { close(preparedDirectoryFD) }
    }

    /// Writes `pieces`, one after another, as the file at absolute `path`.
    public func write(_ pieces: [UnsafeRawBufferPointer], to path: String) throws {
        let slash = path.lastIndex(of: "/") ?? path.startIndex
        let directory = slash == path.startIndex ? "/" : String(path[..<slash])
        let name = path[path.index(after: slash)...]
        try prepare(directory: directory)

        let temporary = directory + "/" + Self.temporaryName(for: name)
        let fd = PendingTemporaryFile.create(temporary)
        defer { PendingTemporaryFile.clear() }
        if fd < 0 { throw Self.userError(SystemError("open", path: temporary), path: path) }
        var named = false
        defer { if !named { unlink(temporary) } }
        do {
            var closed = false
            defer { if !closed { close(fd) } }
            try writeAll(fd: fd, pieces: pieces, path: path)
            if sync, fsync(fd) != 0 { throw Self.userError(SystemError("fsync", path: path), path: path) }
            closed = true
            // Network file systems may report a failed write only here.
            if close(fd) != 0 { throw Self.userError(SystemError("close", path: path), path: path) }
        }
        try rename(temporary, to: path)
        named = true
        try syncDirectory(path: path)
    }

    private func rename(_ temporary: String, to path: String) throws {
        var status: Int32
        if overwrite {
            status = Glibc.rename(temporary, path)
        } else {
            status = clinux_renameat2_noreplace(AT_FDCWD, temporary, AT_FDCWD, path)
            if status != 0 && errno == EINVAL {
                // This file system has no RENAME_NOREPLACE; link() refuses an existing name too.
                status = link(temporary, path)
                if status == 0 { unlink(temporary) }
            }
        }
        if status != 0 { throw Self.userError(SystemError("rename", path: path), path: path) }
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
                hint: "Use --overwrite to replace it, or a -o template that names each photo apart, e.g. with {uuid} or {ms}.")
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

    /// Creates the file and records its name under one lock, so that `removeAndExit` either
    /// sees the file or runs before it can be created: nothing is left behind either way.
    static func create(_ temporary: String) -> Int32 {
        path.withLock { current in
            current = temporary
            return retryingOnInterrupt { open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644) }
        }
    }

    static func clear() { path.withLock { $0 = nil } }

    /// The second signal's way out: remove the file being written, exit holding the lock.
    public static func removeAndExit(status: Int32) -> Never {
        path.withLock { current in
            if let current { unlink(current) }
            _exit(status)
        }
    }
}

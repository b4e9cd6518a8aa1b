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
    /// What to do when the final name is taken.
    public enum ExistingFile: Sendable {
        /// Stop with "already exists" (exit 73): an explicit `-o` said exactly where.
        case refuse
        /// `--overwrite`.
        case replace
        /// The default naming, as a phone's camera does: keep the old file and save as
        /// `NAME-2.jpg`, `NAME-3.jpg`, … (two shots in one second share `{date}_{time}`).
        case keepAndNumber
    }

    public let existing: ExistingFile
    public let sync: Bool
    public var overwrite: Bool { existing == .replace }
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

    public init(existing: ExistingFile, sync: Bool) {
        self.existing = existing
        self.sync = sync
    }

    public convenience init(overwrite: Bool, sync: Bool) {
        self.init(existing: overwrite ? .replace : .refuse, sync: sync)
    }

    deinit {
        if preparedDirectoryFD >= 0 { close(preparedDirectoryFD) }
    }

    /// Writes `pieces`, one after another, as the file at absolute `path`; returns the path it
    /// was saved under (`path`, or a numbered one with `.keepAndNumber`).
    @discardableResult
    public func write(_ pieces: [UnsafeRawBufferPointer], to path: String) throws -> String {
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
        let saved = try moveIntoPlace(temporary, path)
        named = true
        try syncDirectory(path: saved)
        return saved
    }

    private func moveIntoPlace(_ temporary: String, _ path: String) throws -> String {
        var target = path
        var number = 1
        while true {
            let code = rename(temporary, to: target)
            if code == 0 { return target }
            guard code == EEXIST, existing == .keepAndNumber, number < 1000 else {
                throw Self.userError(SystemError("rename", path: target, errno: code), path: target)
            }
            number += 1
            target = Self.numbered(path, number)
        }
    }

    /// `/d/a_1.jpg`, 2 → `/d/a_1-2.jpg`.
    static func numbered(_ path: String, _ number: Int) -> String {
        let nameStart = path.lastIndex(of: "/").map(path.index(after:)) ?? path.startIndex
        guard let dot = path[nameStart...].lastIndex(of: "."), dot > nameStart else { return path + "-\(number)" }
        return String(path[..<dot]) + "-\(number)" + String(path[dot...])
    }

    /// 0, or the errno of the failed rename.
    private func rename(_ temporary: String, to path: String) -> Int32 {
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
        return status == 0 ? 0 : errno
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

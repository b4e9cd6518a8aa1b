import FoundationEssentials
import Glibc

/// Opening what the catalog says is a saved file, when anything may now sit at that path.
enum RegularFile {
    enum Problem: Error {
        case missing
        /// A FIFO, a device, a directory, a socket or a symbolic link: never opened, never read.
        case notRegular(String)
        case system(SystemError)
        /// The file could not be read for a reason of this process's or this user's (too many
        /// open files, no memory, no permission): nothing is known about the file itself, and
        /// every file after it would likely meet the same. A check stops here (`stopError`)
        /// rather than report the file damaged.
        case cannotRead(SystemError)
        /// Over the size the caller takes (`read(_:limit:)`).
        case tooLarge

        var detail: String {
            switch self {
            case .missing: "missing"
            case .notRegular(let kind): "not a regular file (\(kind))"
            case .tooLarge: "too large"
            case .system(let error), .cannotRead(let error): "unreadable: \(error.reason)"
            }
        }

        /// `system` or `cannotRead`, as the errno says.
        static func from(_ error: SystemError) -> Problem {
            [EMFILE, ENFILE, ENOMEM, EACCES, EPERM].contains(error.errno) ? .cannotRead(error) : .system(error)
        }

        /// The error that ends a check which met `cannotRead`; `readers`: how many files it read
        /// at once.
        static func stopError(_ error: SystemError, path: String, readers: Int = 1) -> CamrollError {
            let hint: String? = switch error.errno {
            case EACCES, EPERM: "Run it as the user that saved the files, or give that user read access."
            case EMFILE, ENFILE: "Raise the limit on open files (ulimit -n)\(readers > 1 ? ", or read fewer files at once (--jobs)" : "")."
            default: nil
            }
            return CamrollError(error.accessExitCode, "cannot read \(path): \(error.reason)", hint: hint)
        }
    }

    /// Opens `path` for reading only if it is a regular file: O_NONBLOCK so a FIFO cannot block
    /// the open, O_NOFOLLOW so a link to /dev/zero (or anywhere) is not followed, then fstat.
    /// With `directory`, the file `name` in that open directory (`path` naming it in errors).
    static func open(_ path: String, in directory: Int32 = AT_FDCWD, name: String? = nil) -> Result<Int32, Problem> {
        let fd = retryingOnInterrupt { openat(directory, name ?? path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC) }
        guard fd >= 0 else {
            switch errno {
            // ENOTDIR: a directory on the way is a file now: what was saved there is gone too.
            case ENOENT, ENOTDIR: return .failure(.missing)
            case ELOOP: return .failure(.notRegular("a symbolic link"))
            default: return .failure(.from(SystemError("open", path: path)))
            }
        }
        var status = stat()
        guard fstat(fd, &status) == 0 else {
            let error = SystemError("fstat", path: path)
            close(fd)
            return .failure(.from(error))
        }
        let type = status.st_mode & S_IFMT
        guard type == S_IFREG else {
            close(fd)
            let kind = type == S_IFIFO ? "a FIFO" : type == S_IFDIR ? "a directory"
                : type == S_IFCHR || type == S_IFBLK ? "a device" : type == S_IFSOCK ? "a socket" : "not a file"
            return .failure(.notRegular(kind))
        }
        return .success(fd)
    }

    /// The whole file, if it is a regular file of at most `limit` bytes.
    static func contents(_ path: String, limit: Int) -> [UInt8]? {
        try? read(path, limit: limit).get()
    }

    /// The whole file if it is a regular file of at most `limit` bytes; otherwise why not.
    static func read(_ path: String, limit: Int) -> Result<[UInt8], Problem> {
        let fd: Int32
        switch open(path) {
        case .failure(let problem): return .failure(problem)
        case .success(let opened): fd = opened
        }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { return .failure(.from(SystemError("fstat", path: path))) }
        guard Int(status.st_size) <= limit else { return .failure(.tooLarge) }
        var bytes = [UInt8](repeating: 0, count: Int(status.st_size))
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + offset, $0.count - offset) }
            if count < 0 && errno == EINTR { continue }
            if count < 0 { return .failure(.from(SystemError("read", path: path))) }
            // Shorter than its size said: cut while being read, not the whole file.
            if count == 0 { return .failure(.system(SystemError("read", path: path, errno: EIO))) }
            offset += count
        }
        return .success(bytes)
    }

    /// The file's modification time, whatever it is (before year 1, after 9999: `Timestamp` clamps).
    static func modificationDate(_ path: String) -> Date? {
        var status = stat()
        guard lstat(path, &status) == 0 else { return nil }
        return Date(timeIntervalSince1970: Double(status.st_mtim.tv_sec) + Double(status.st_mtim.tv_nsec) / 1e9)
    }
}

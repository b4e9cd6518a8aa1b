import Glibc

/// A failed system call: the call's name, what it acted on, and errno.
public struct SystemError: Error, CustomStringConvertible, Sendable {
    public let call: String
    public let path: String?
    public let errno: Int32

    public init(_ call: String, path: String? = nil, errno: Int32 = Glibc.errno) {
        self.call = call
        self.path = path
        self.errno = errno
    }

    public var reason: String { String(cString: strerror(errno)) }

    public var description: String {
        if let path { return "\(call) '\(path)': \(reason)" }
        return "\(call): \(reason)"
    }

    /// The sysexits code for this errno when it happened while reading or removing what is
    /// there: 77 for a permission, 74 for the rest.
    public var accessExitCode: ExitCode { errno == EACCES || errno == EPERM ? .permissionDenied : .ioError }

    /// The sysexits code for this errno when it happened while creating output.
    public var outputExitCode: ExitCode {
        switch errno {
        case EROFS, EACCES, EPERM, EEXIST, ENOTDIR, EISDIR, ENAMETOOLONG, ELOOP, ENOENT:
            return .cannotCreate
        default:  // ENOSPC, EDQUOT, EFBIG, EIO and the unexpected
            return .ioError
        }
    }
}

/// Writes all of `bytes` to `fd`, across short writes and EINTR: 0, or the errno that stopped
/// it (EIO for a write that wrote nothing and gave no error, which would otherwise loop).
func writeFully(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int32 {
    var offset = 0
    while offset < bytes.count {
        let written = retryingOnInterrupt { write(fd, bytes.baseAddress! + offset, bytes.count - offset) }
        if written <= 0 { return written == 0 ? EIO : errno }
        offset += written
    }
    return 0
}

/// Runs a system call, retrying while it fails with EINTR.
@inline(__always)
func retryingOnInterrupt<T: BinaryInteger>(_ body: () -> T) -> T {
    while true {
        let result = body()
        if result == -1 && errno == EINTR { continue }
        return result
    }
}

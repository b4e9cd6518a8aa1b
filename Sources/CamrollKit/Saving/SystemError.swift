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

/// Runs a system call, retrying while it fails with EINTR.
@inline(__always)
func retryingOnInterrupt<T: BinaryInteger>(_ body: () -> T) -> T {
    while true {
        let result = body()
        if result == -1 && errno == EINTR { continue }
        return result
    }
}

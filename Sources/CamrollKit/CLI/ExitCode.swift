import Glibc

/// Process exit statuses, from sysexits(3). Scripts depend on these numbers (README's table).
public enum ExitCode: Int32, Sendable {
    case success = 0
    /// `verify` found problems, or a failure with no more specific code.
    case failure = 1
    case usage = 64
    /// Corrupt frame or input file.
    case dataError = 65
    /// No such device or file.
    case noInput = 66
    /// A URL's host name does not resolve.
    case noHost = 68
    /// Device busy, no camera, catalog locked by another process, a server that refuses or fails.
    case unavailable = 69
    /// Output cannot be created: exists, not writable.
    case cannotCreate = 73
    /// I/O error: ENOSPC, EIO, EDQUOT.
    case ioError = 74
    /// No frame arrived within --timeout.
    case frameTimeout = 75
    /// A server's answer breaks the protocol: a redirect loop, an unexpected status, TLS failure.
    case protocolError = 76
    case permissionDenied = 77
    /// Ended by a signal: SIGHUP (the terminal closed), SIGINT (Ctrl-C), SIGTERM.
    case hungUp = 129
    case interrupted = 130
    case terminated = 143

    /// The status for a run cancelled by `signal` (128 + its number, as a shell reports it).
    public init(cancelledBy signal: Int32?) {
        switch signal {
        case SIGHUP: self = .hungUp
        case SIGTERM: self = .terminated
        default: self = .interrupted
        }
    }
}

/// An error meant for the user: one line of message, an optional hint line, an exit code.
public struct CamrollError: Error, CustomStringConvertible, Sendable {
    public var exitCode: ExitCode
    public var message: String
    public var hint: String?
    /// The errno behind it, where a system call failed and the caller may act on which
    /// (`--fill` ends normally at ENOSPC).
    public var systemErrno: Int32?

    public init(_ exitCode: ExitCode, _ message: String, hint: String? = nil, systemErrno: Int32? = nil) {
        self.exitCode = exitCode
        self.message = message
        self.hint = hint
        self.systemErrno = systemErrno
    }

    /// The file system (or the user's quota on it) is full.
    public var isNoSpace: Bool { systemErrno == ENOSPC || systemErrno == EDQUOT }

    public var description: String { message }

    public static func usage(_ message: String, hint: String? = nil) -> CamrollError {
        CamrollError(.usage, message, hint: hint)
    }
}

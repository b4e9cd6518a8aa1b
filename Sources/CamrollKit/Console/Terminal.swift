import CLinux
import Glibc
import Synchronization

/// Where camroll writes, and what the other end can show.
public final class Console: Sendable {
    public enum ColorMode: String, Sendable { case auto, always, never }

    public let colorMode: ColorMode
    public let stderrIsTerminal: Bool
    public let stdoutIsTerminal: Bool
    /// Colour on stderr (messages, progress).
    public let useColor: Bool
    /// Colour (and pictures drawn with it) on stdout.
    public let useColorOnStdout: Bool
    /// Serialises writes: progress comes from the main loop, messages from the signal queue too.
    private let lock = Locked<Void>(())

    public init(colorMode: ColorMode = .auto, environment: [String: String] = [:]) {
        self.colorMode = colorMode
        stderrIsTerminal = isatty(STDERR_FILENO) == 1
        stdoutIsTerminal = isatty(STDOUT_FILENO) == 1
        // --color always/never decide; auto means a terminal that is not 'dumb', and no NO_COLOR.
        let colorAllowed = !(environment["NO_COLOR"].map { !$0.isEmpty } ?? false) && environment["TERM"] != "dumb"
        switch colorMode {
        case .always:
            useColor = true
            useColorOnStdout = true
        case .never:
            useColor = false
            useColorOnStdout = false
        case .auto:
            useColor = stderrIsTerminal && colorAllowed
            useColorOnStdout = stdoutIsTerminal && colorAllowed
        }
    }

    /// The width of the terminal on stderr, or nil when it is not one.
    public var stderrColumns: Int? {
        let columns = Int(clinux_terminal_columns(STDERR_FILENO))
        return columns > 0 ? columns : nil
    }

    /// The screen a listing or a picture on stdout is to fit: COLUMNS and LINES where they are
    /// set, else the terminal's size, else 80x24 (a pipe, a file: what a terminal most often is).
    public func stdoutScreen(environment: [String: String]) -> (columns: Int, rows: Int) {
        func variable(_ name: String) -> Int? { environment[name].flatMap { Int($0) }.flatMap { (1...100_000).contains($0) ? $0 : nil } }
        var columns: Int32 = 0, rows: Int32 = 0, width: Int32 = 0, height: Int32 = 0
        let terminal = clinux_terminal_size(STDOUT_FILENO, &columns, &rows, &width, &height) == 0 && columns > 0 && rows > 0
        return (variable("COLUMNS") ?? (terminal ? Int(columns) : 80), variable("LINES") ?? (terminal ? Int(rows) : 24))
    }

    /// The width of the terminal on stdout, or nil when it is not one.
    public var stdoutColumns: Int? {
        let columns = Int(clinux_terminal_columns(STDOUT_FILENO))
        return columns > 0 ? columns : nil
    }

    /// Text to stdout, with whatever came from outside in it shown harmless: control
    /// characters and bidi overrides escaped, line breaks kept (`String.printableLines`).
    public func out(_ text: String) { write(STDOUT_FILENO, text.printableLines) }
    /// To stdout as it is: JSON (escaped already, and to be read exactly), a picture's own
    /// escape sequences, generated scripts and pages.
    public func outRaw(_ text: String) { write(STDOUT_FILENO, text) }
    /// Text to stderr, as `out` shows it.
    public func err(_ text: String) { write(STDERR_FILENO, text.printableLines) }
    /// camroll's own terminal `control` sequence (a live line's return and erase), then `text`
    /// as `err` shows it.
    public func err(control: String, _ text: String) { write(STDERR_FILENO, control + text.printableLines) }

    /// `camroll: error: message`, then the hint on its own line. The message is one line
    /// whatever it echoes (a line break in an argument shows as `\n`).
    public func error(_ message: String, hint: String? = nil) {
        let label = useColor ? "\u{1B}[1;31merror:\u{1B}[0m" : "error:"
        var text = "camroll: \(label) \(message.printable)\n"
        if let hint { text += hint.printableLines + "\n" }
        write(STDERR_FILENO, text)
    }

    public func warning(_ message: String) {
        let label = useColor ? "\u{1B}[1;33mwarning:\u{1B}[0m" : "warning:"
        write(STDERR_FILENO, "camroll: \(label) \(message.printable)\n")
    }

    private func write(_ fd: Int32, _ text: String) {
        lock.withLock { _ in Self.writeAll(fd, Array(text.utf8)) }
    }

    /// The errno of the first write to stdout that failed, 0 while none has: a command whose
    /// output did not all arrive (a full disk, an I/O error) must not end with status 0
    /// (`stdoutFailure`). Process-wide, as stdout is.
    private static let firstStdoutErrno = Atomic<Int32>(0)

    /// Why stdout lost output, when it did and the reader had not simply gone away: a closed
    /// pipe (`camroll list | head`) is the reader's choice, as it is for other tools.
    public static var stdoutFailure: SystemError? {
        let code = firstStdoutErrno.load(ordering: .relaxed)
        return code == 0 || code == EPIPE ? nil : SystemError("write", errno: code)
    }

    /// Whether a write to stdout has failed, for whatever reason (a closed pipe too): a command
    /// printing much can stop there.
    public static var stdoutHasFailed: Bool { firstStdoutErrno.load(ordering: .relaxed) != 0 }

    /// Writes all of `bytes`, across short writes and EINTR; stops when the other end is gone
    /// (a closed pipe, a full disk, a closed terminal), remembering why for stdout.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
        let failure = bytes.withUnsafeBytes { writeFully(fd, $0) }
        if failure != 0 && fd == STDOUT_FILENO {
            _ = firstStdoutErrno.compareExchange(expected: 0, desired: failure, ordering: .relaxed)
        }
    }
}

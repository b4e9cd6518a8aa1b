import Glibc
import CLinux
import Synchronization

/// The terminal taken over for a full-screen view: raw keys (no echo, no line editing, Ctrl-C a
/// key like any other), the alternate screen, the cursor hidden. `restore()` gives back exactly
/// what was there, and runs on every way out: a normal return, an error, and — through the
/// signal thread — SIGTERM, SIGHUP or a second Ctrl-C.
public final class FullScreen: Sendable {
    private let input: Int32
    private let output: Int32
    private let saved: termios
    private let raw: termios
    private let active = Atomic<Bool>(false)

    /// Takes the terminal on `input` (keys) and `output` (drawing).
    public init(input: Int32 = STDIN_FILENO, output: Int32 = STDERR_FILENO) throws {
        self.input = input
        self.output = output
        var attributes = termios()
        guard tcgetattr(input, &attributes) == 0 else {
            throw CamrollError(.usage, "cannot read the terminal's settings: \(SystemError("tcgetattr").reason)")
        }
        saved = attributes
        // Raw input as cfmakeraw makes it, but output processing kept, so that "\n" still
        // returns the carriage in what chafa prints.
        attributes.c_iflag &= ~tcflag_t(IGNBRK | BRKINT | PARMRK | ISTRIP | INLCR | IGNCR | ICRNL | IXON)
        attributes.c_lflag &= ~tcflag_t(ECHO | ECHONL | ICANON | ISIG | IEXTEN)
        attributes.c_cflag &= ~tcflag_t(CSIZE | PARENB)
        attributes.c_cflag |= tcflag_t(CS8)
        withUnsafeMutableBytes(of: &attributes.c_cc) { cc in
            cc[Int(VMIN)] = 0
            cc[Int(VTIME)] = 0
        }
        raw = attributes
        try take()
    }

    private func take() throws {
        var attributes = raw
        guard tcsetattr(input, TCSANOW, &attributes) == 0 else {
            throw CamrollError(.usage, "cannot set the terminal to raw mode: \(SystemError("tcsetattr").reason)")
        }
        active.store(true, ordering: .sequentiallyConsistent)
        SignalWatcher.setBeforeExit { [self] in restore() }
        // Alternate screen, cursor hidden, screen cleared.
        write("\u{1B}[?1049h\u{1B}[?25l\u{1B}[2J\u{1B}[H")
    }

    /// Ctrl-Z, which raw mode delivers as a key: the terminal given back as it was, this process
    /// stopped as the shell's job control expects (SIGTSTP), and the terminal taken again once
    /// it is continued (`fg`). The caller redraws.
    public func suspend() throws {
        restore()
        raise(SIGTSTP)
        try take()
    }

    deinit { restore() }

    /// Leaves the alternate screen, shows the cursor, puts the terminal's settings back. Safe
    /// to call more than once, and from the signal thread.
    public func restore() {
        guard active.exchange(false, ordering: .sequentiallyConsistent) else { return }
        // Kitty keeps images until told; the attributes are reset before leaving.
        write("\u{1B}[0m\u{1B}[?25h\u{1B}[?1049l")
        var attributes = saved
        _ = tcsetattr(input, TCSANOW, &attributes)
        SignalWatcher.setBeforeExit(nil)
    }

    public var size: TerminalSize? { TerminalSize.of(output) }

    public func write(_ text: String) { write(Array(text.utf8)) }

    public func write(_ bytes: [UInt8]) { Console.writeAll(output, bytes) }

    /// Waits up to `microseconds` for input; the keys typed, decoded.
    public func keys(waiting microseconds: Int) -> [Key] {
        var descriptor = pollfd(fd: input, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, Int32(max(0, microseconds / 1000))) > 0 else { return [] }
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = read(input, &buffer, buffer.count)
        if count == 0 || (count < 0 && errno != EINTR && errno != EAGAIN) { return [.hangUp] }
        guard count > 0 else { return [] }
        return Key.decode(Array(buffer.prefix(count)))
    }
}

/// A key as the full-screen views understand it.
public enum Key: Equatable, Sendable {
    case character(Character)
    case enter, escape, up, down, left, right, interrupt
    /// Ctrl-Z.
    case suspend
    /// The terminal went away (end of input).
    case hangUp

    /// Bytes a terminal sends, as keys: arrows in both cursor modes (`ESC [ A`, `ESC O A`), a
    /// lone ESC as Escape, Ctrl-C as interrupt, Ctrl-Z as suspend, CR or LF as enter.
    public static func decode(_ bytes: [UInt8]) -> [Key] {
        var keys: [Key] = []
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case 0x03: keys.append(.interrupt)
            case 0x1A: keys.append(.suspend)
            case 0x0D, 0x0A: keys.append(.enter)
            case 0x1B:
                if index + 1 < bytes.count, bytes[index] == UInt8(ascii: "[") || bytes[index] == UInt8(ascii: "O") {
                    let arrows: [UInt8: Key] = [0x41: .up, 0x42: .down, 0x43: .right, 0x44: .left]
                    if let arrow = arrows[bytes[index + 1]] {
                        keys.append(arrow)
                        index += 2
                        continue
                    }
                    // Another sequence (a function key): skipped up to its final byte.
                    index += 1
                    while index < bytes.count, !(0x40...0x7E).contains(bytes[index]) { index += 1 }
                    index += 1
                    continue
                }
                keys.append(.escape)
            case 0x20...0x7E: keys.append(.character(Character(Unicode.Scalar(byte))))
            default: continue
            }
        }
        return keys
    }
}

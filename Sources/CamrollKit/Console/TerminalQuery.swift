import Glibc

/// What a terminal can draw, asked of the terminal (or of tmux) where the environment does not
/// say: chafa decides from TERM and COLORTERM alone, which inside tmux name tmux, not the
/// terminal it draws on.
enum TerminalQuery {
    /// The environment chafa is to decide from: inside tmux, COLORTERM=truecolor when the
    /// terminal tmux draws on takes 24-bit colour (tmux's RGB feature: terminfo's RGB or Tc, or
    /// `terminal-features`), since tmux passes such colours on only then and says so to no one.
    static func colorEnvironment(_ environment: [String: String]) -> [String: String] {
        guard environment["TMUX"] != nil, !["truecolor", "24bit"].contains(environment["COLORTERM"] ?? "") else { return environment }
        guard let features = run(["tmux", "display-message", "-p", "#{client_termfeatures}"], environment: environment),
              features.split(whereSeparator: { $0 == "," || $0 == "\n" }).contains("RGB") else { return environment }
        var changed = environment
        changed["COLORTERM"] = "truecolor"
        return changed
    }

    /// Whether the terminal on `input`/`output` says it draws sixels: attribute 4 in its answer
    /// to DA1 (`ESC [ c`), as xterm, foot, mlterm and tmux built with sixels answer. No answer
    /// within `timeoutMilliseconds`, or not a terminal: no.
    static func drawsSixels(input: Int32 = STDIN_FILENO, output: Int32 = STDERR_FILENO, timeoutMilliseconds: Int32 = 400) -> Bool {
        guard isatty(input) == 1, isatty(output) == 1 else { return false }
        var saved = termios()
        guard tcgetattr(input, &saved) == 0 else { return false }
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ECHO | ICANON)
        guard tcsetattr(input, TCSANOW, &raw) == 0 else { return false }
        defer { _ = tcsetattr(input, TCSANOW, &saved) }
        Console.writeAll(output, Array("\u{1B}[c".utf8))
        // The answer: ESC [ ? 62 ; 4 ; 22 c (the attributes between ? and c).
        var answer: [UInt8] = []
        let deadline = monotonicMicroseconds() + Int(timeoutMilliseconds) * 1000
        while !answer.contains(UInt8(ascii: "c")) {
            let left = Int32((deadline - monotonicMicroseconds()) / 1000)
            var descriptor = pollfd(fd: input, events: Int16(POLLIN), revents: 0)
            guard left > 0, poll(&descriptor, 1, left) > 0 else { return false }
            var byte: UInt8 = 0
            guard read(input, &byte, 1) == 1 else { return false }
            answer.append(byte)
        }
        guard let start = answer.firstIndex(of: UInt8(ascii: "?")) else { return false }
        let attributes = String(decoding: answer[(start + 1)...].dropLast(), as: UTF8.self).split(separator: ";")
        return attributes.contains("4")
    }

    /// `command`'s standard output (found on PATH), or nil when it cannot run, fails or takes
    /// over half a second.
    static func run(_ command: [String], environment: [String: String]) -> String? {
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else { return nil }
        defer { close(pipeEnds[0]) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], STDOUT_FILENO)
        posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addclose(&actions, pipeEnds[0])
        let arguments = command.map { strdup($0) } + [nil]
        let variables = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (arguments + variables).forEach { free($0) } }
        var child: pid_t = 0
        let spawned = ChildProcess.withSpawnAttributes(ownGroup: false) { attributes in
            posix_spawnp(&child, command[0], &actions, attributes, arguments, variables)
        }
        close(pipeEnds[1])
        guard spawned == 0 else { return nil }
        var output: [UInt8] = []
        let deadline = monotonicMicroseconds() + 500_000
        var buffer = [UInt8](repeating: 0, count: 512)
        while true {
            let left = Int32((deadline - monotonicMicroseconds()) / 1000)
            var descriptor = pollfd(fd: pipeEnds[0], events: Int16(POLLIN), revents: 0)
            guard left > 0, poll(&descriptor, 1, left) > 0 else {
                kill(child, SIGKILL)
                break
            }
            let count = read(pipeEnds[0], &buffer, buffer.count)
            if count <= 0 { break }
            output += buffer.prefix(count)
        }
        var status: Int32 = 0
        while waitpid(child, &status, 0) < 0 && errno == EINTR {}
        guard status == 0 else { return nil }
        return String(decoding: output, as: UTF8.self)
    }
}

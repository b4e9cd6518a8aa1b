import FoundationEssentials
import Glibc
import Synchronization

/// `--exec CMD [ARG…] ;`: a program run after each saved photo, with `{path}`, `{seq}` and
/// `{time}` replaced in each of its arguments — each argument stays one argument, whatever the
/// path holds (spaces, quotes, `$(…)`): there is no shell. At most one runs at a time: a photo
/// saved while the last one's hook still runs gets none (counted). A hook that outlives its
/// timeout is killed, with its process group. Its exit status is reported, never fatal.
final class Hook: @unchecked Sendable {
    let command: [String]
    let timeoutMicroseconds: Int
    /// Told how each run ended: nil for a success, else what went wrong.
    private let report: @Sendable (_ problem: String?, _ skipped: Bool) -> Void
    private let running = Atomic<Bool>(false)
    private let skippedCount = Atomic<Int>(0)
    private let finishedCount = Atomic<Int>(0)
    private var thread: pthread_t?

    init(command: [String], timeoutMicroseconds: Int, report: @escaping @Sendable (String?, Bool) -> Void) {
        self.command = command
        self.timeoutMicroseconds = timeoutMicroseconds
        self.report = report
    }

    var skipped: Int { skippedCount.load(ordering: .relaxed) }
    var finished: Int { finishedCount.load(ordering: .relaxed) }

    /// The arguments for one photo.
    static func arguments(_ command: [String], path: String, seq: Int, time: Date) -> [String] {
        let stamp = Timestamp.iso8601(time)
        return command.map { $0.replacing("{path}", with: path).replacing("{seq}", with: String(seq)).replacing("{time}", with: stamp) }
    }

    /// Starts the hook for this photo, unless the last one still runs.
    func run(path: String, seq: Int, time: Date) {
        guard running.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else {
            skippedCount.add(1, ordering: .relaxed)
            report("the hook for the previous photo still runs: skipped for \(path)", true)
            return
        }
        waitForLast()
        let arguments = Self.arguments(command, path: path, seq: seq, time: time)
        thread = spawnThread { [self] in
            let problem = Self.execute(arguments, timeoutMicroseconds: timeoutMicroseconds)
            finishedCount.add(1, ordering: .relaxed)
            report(problem, false)
            running.store(false, ordering: .releasing)
        }
    }

    /// Waits for the running hook (at the end of the run), at most its timeout.
    func waitForLast() {
        if let thread {
            pthread_join(thread, nil)
            self.thread = nil
        }
    }

    /// Runs `arguments` to its end or its timeout; nil when it exited 0.
    static func execute(_ arguments: [String], timeoutMicroseconds: Int) -> String? {
        guard let program = arguments.first else { return "no command" }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // Its standard output is not camroll's (NDJSON with --json): it goes to stderr, the log.
        posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO)
        posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)

        var pid: pid_t = 0
        let cStrings = arguments.map { strdup($0) }
        defer { cStrings.forEach { free($0) } }
        let argv = cStrings + [nil]
        // Its own process group: a timeout kills all it started (ChildProcess).
        let status = ChildProcess.withSpawnAttributes(ownGroup: true) { attributes in
            argv.withUnsafeBufferPointer { argv in
                posix_spawnp(&pid, program, &actions, attributes, UnsafeMutablePointer(mutating: argv.baseAddress!), environ)
            }
        }
        guard status == 0 else { return "cannot run \(program): \(String(cString: strerror(status)))" }
        let deadline = monotonicMicroseconds() + timeoutMicroseconds
        var exitStatus: Int32 = 0
        while true {
            let done = waitpid(pid, &exitStatus, WNOHANG)
            if done == pid { break }
            if done < 0 && errno != EINTR { return "waitpid: \(String(cString: strerror(errno)))" }
            if monotonicMicroseconds() >= deadline {
                kill(-pid, SIGKILL)
                kill(pid, SIGKILL)
                while waitpid(pid, &exitStatus, 0) < 0 && errno == EINTR {}
                return "\(program) was killed after its timeout of \(Units.duration(microseconds: timeoutMicroseconds))"
            }
            usleep(10_000)
        }
        let termination = exitStatus & 0x7f
        if termination == 0 {
            let code = (exitStatus >> 8) & 0xff
            return code == 0 ? nil : "\(program) exited with status \(code)"
        }
        return "\(program) was killed by signal \(termination)"
    }
}

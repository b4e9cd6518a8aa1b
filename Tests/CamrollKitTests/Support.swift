@testable import CamrollKit
import Foundation
import Testing

/// A fresh directory under /tmp (or `parent`), removed when the test's value goes away.
final class TemporaryDirectory {
    let path: String

    init(in parent: String = NSTemporaryDirectory()) throws {
        path = (parent.hasSuffix("/") ? parent : parent + "/") + "camroll-test-" + UUID().uuidString.lowercased()
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func file(_ name: String) -> String { path + "/" + name }

    func files(in subdirectory: String, suffix: String = "") -> [String] {
        let directory = file(subdirectory)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { $0.hasSuffix(suffix) }.sorted().map { directory + "/" + $0 }
    }
}

/// A file of this repository by its path from the top (`Tests/http/server.py`): the tests read
/// sources and run helper scripts that live beside them.
func repositoryFile(_ relativePath: String) -> String {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent(relativePath).path
}

/// True when the suites run under AddressSanitizer (`make asan` sets it). Its runtime reserves
/// terabytes of address space and its heap is not malloc's, so a test that limits the process's
/// memory (prlimit --as or --data) cannot run there: those tests are skipped, and say so.
let underAddressSanitizer = ProcessInfo.processInfo.environment["CAMROLL_SANITIZER"] == "address"
let memoryLimitsApply = Testing.ConditionTrait.disabled(
    if: underAddressSanitizer, "a memory limit cannot apply under AddressSanitizer")

/// Runs the built `camroll` binary, as a user would.
struct CamrollBinary {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Next to the test bundle in .build/<config>/, or $CAMROLL_BIN.
    static var path: String {
        if let override = ProcessInfo.processInfo.environment["CAMROLL_BIN"] { return override }
        let runner = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = runner.deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("camroll").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return repositoryFile(".build/debug/camroll")
    }

    static func process(_ arguments: [String], environment: [String: String] = [:], prefix: [String] = []) -> Process {
        programProcess(prefix + [path] + arguments, environment: environment)
    }

    /// Starts camroll with `arguments` (--json among them) and returns once it has begun saving
    /// (its first event, the start, is out), with the pipe of its events. Its errors go to
    /// `errors`, or nowhere.
    static func startSaving(_ arguments: [String], errors: Pipe? = nil) throws -> (process: Process, events: Pipe) {
        let process = process(arguments)
        let events = Pipe()
        process.standardOutput = events
        process.standardError = errors ?? FileHandle.nullDevice
        try process.run()
        _ = try events.fileHandleForReading.read(upToCount: 1)
        return (process, events)
    }

    static func programProcess(_ command: [String], environment: [String: String] = [:]) -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        var env = ProcessInfo.processInfo.environment
        env["NO_COLOR"] = "1"
        for (key, value) in environment { env[key] = value }
        process.environment = env
        return process
    }

    @discardableResult
    static func run(_ arguments: [String], environment: [String: String] = [:], prefix: [String] = []) throws -> Result {
        try runProgram(prefix + [path] + arguments, environment: environment)
    }

    /// Runs any program (script(1), prlimit, …) and collects what it printed.
    static func runProgram(_ command: [String], environment: [String: String] = [:]) throws -> Result {
        let process = programProcess(command, environment: environment)
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Read both pipes before waiting, so a chatty child never blocks on a full pipe.
        let group = DispatchGroup()
        nonisolated(unsafe) var outData = Data(), errData = Data()
        DispatchQueue.global().async(group: group) { outData = out.fileHandleForReading.readDataToEndOfFile() }
        DispatchQueue.global().async(group: group) { errData = err.fileHandleForReading.readDataToEndOfFile() }
        group.wait()
        process.waitUntilExit()
        return Result(
            status: process.terminationReason == .exit ? process.terminationStatus : 128 + process.terminationStatus,
            stdout: String(decoding: outData, as: UTF8.self), stderr: String(decoding: errData, as: UTF8.self))
    }
}

/// SQL that takes a catalog back to what older camrolls made, for the tests of their migrations.
enum OlderSchema {
    /// Before schema 8: thumbnails in the captures' rows.
    static let thumbnailsInCaptures = """
        ALTER TABLE captures ADD COLUMN thumbnail BLOB;
        UPDATE captures SET thumbnail = (SELECT jpeg FROM thumbnails WHERE capture_id = captures.id);
        DROP TABLE thumbnails;
        """
}

/// Reads a catalog the way a user with sqlite3 would.
struct CatalogReader {
    let database: Database

    init(_ path: String) throws {
        do {
            let plain = try Database(path: path, readOnly: true)
            _ = try plain.scalarInt("PRAGMA schema_version")
            database = plain
        } catch let error as DatabaseError where error.isNoSpace {
            // On a full file system SQLite cannot make the WAL index: read it as camroll does.
            database = try Catalog(path: path, readOnly: true).database
        }
    }

    func int(_ sql: String) throws -> Int { try database.scalarInt(sql) ?? -1 }
    func text(_ sql: String) throws -> String? { try database.scalarText(sql) }

    func rows(_ sql: String, columns: Int32) throws -> [[String?]] {
        let statement = try database.prepare(sql)
        var rows: [[String?]] = []
        while try statement.step() { rows.append((0..<columns).map { statement.text($0) }) }
        return rows
    }
}

/// A new catalog at `path`, held by another writer (`BEGIN EXCLUSIVE`) until the connection
/// returned rolls back: camroll finds it locked.
func catalogHeldByAnotherWriter(_ path: String) throws -> Database {
    _ = try Catalog(path: path)
    let holder = try Database(path: path)
    try holder.execute("BEGIN EXCLUSIVE")
    return holder
}

func fileBytes(_ path: String) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
}

/// `xxhsum -H2 FILE…` → [path: hex], the independent check of camroll's digests.
func xxhsum(_ paths: [String]) throws -> [String: String] {
    var result: [String: String] = [:]
    for chunk in stride(from: 0, to: paths.count, by: 500) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/xxhsum")
        process.arguments = ["-H2"] + paths[chunk..<min(paths.count, chunk + 500)]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1)
            guard parts.count == 2 else { continue }
            result[parts[1].trimmingCharacters(in: .whitespaces)] = String(parts[0])
        }
    }
    return result
}

/// A valid 16x8 JPEG whose frame header then claims another size.
func jpegClaiming(width: Int, height: Int) throws -> [UInt8] {
    let frame = Frame(format: .yuyv, width: 16, height: 8, bytesPerLine: 32, bytes: [UInt8](repeating: 128, count: 256),
                      sequence: 0, capturedAt: Date())
    var jpeg = try JPEGEncoder().encode(frame, quality: 50).bytes
    guard let sof = (0..<(jpeg.count - 1)).first(where: { jpeg[$0] == 0xFF && jpeg[$0 + 1] == 0xC0 }) else { return jpeg }
    jpeg[sof + 5] = UInt8(height >> 8); jpeg[sof + 6] = UInt8(height & 0xFF)
    jpeg[sof + 7] = UInt8(width >> 8); jpeg[sof + 8] = UInt8(width & 0xFF)
    return jpeg
}

/// Starts programs that outlive the call — tmux's server, FUSE daemons — with posix_spawn, their
/// output to a file, no descriptor of the test runner but 0-2 and no signal blocked.
/// Foundation's Process would wait for the daemon to close the pipes it reads, which a daemon
/// never does; fork-based system() would hand it every pipe open in the runner at that moment,
/// among them the pipes of other tests' camroll runs running in parallel, whose readers then
/// wait for the daemon to exit (once 600 s, for the `sleep 600` of a tmux pane).
enum Daemon {
    /// The child's pid; it runs `argv` with stdin /dev/null and stdout and stderr to `output`.
    static func spawn(_ argv: [String], output: String) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        _ = closeFrom(&actions, 3)
        // No signal blocked, none ignored: a test's thread blocks most, and a child inherits
        // that mask — a tmux pane then outlives kill-server's SIGHUP.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let cArguments = argv.map { strdup($0) } + [nil]
        defer { cArguments.forEach { free($0) } }
        var pid: pid_t = 0
        let failed = posix_spawn(&pid, argv[0], &actions, &attributes, cArguments, environ)
        guard failed == 0 else { throw SystemError("posix_spawn", path: argv[0], errno: failed) }
        return pid
    }

    /// glibc's posix_spawn_file_actions_addclosefrom_np (2.34), which Swift's Glibc module does
    /// not declare: looked up by name.
    private static let closeFrom: @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32 = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else {
            fatalError("glibc without posix_spawn_file_actions_addclosefrom_np")
        }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()

    /// Waits for `pid`; its exit status, or 128 + the signal that ended it.
    static func wait(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }

    /// Runs `argv` to its end (a client, or a daemon that forks away); its status and output.
    static func run(_ argv: [String], output: String) throws -> (status: Int32, output: String) {
        let status = wait(try spawn(argv, output: output))
        return (status, (try? String(contentsOfFile: output, encoding: .utf8)) ?? "")
    }
}

/// A helper's default options and a test's own: camroll refuses an option given twice (`-r
/// 320x240 … -r 64x48`), so a default the test gives again is left out. `defaults` first, then
/// `extra`.
func options(_ defaults: [String], then extra: [String]) -> [String] {
    notGiven(defaults, in: extra) + extra
}

/// `arguments` (a command first), then those of `defaults` that it does not give itself.
func options(_ arguments: [String], adding defaults: [String]) -> [String] {
    arguments + notGiven(defaults, in: arguments)
}

/// The options of `defaults` (each with its value) that `words` does not give, in any form:
/// `-o X`, `--output X`, `--output=X`, `-oX`.
private func notGiven(_ defaults: [String], in words: [String]) -> [String] {
    func spec(_ name: String) -> OptionSpec? { CommandTable.commands.lazy.compactMap { $0.option(named: name) }.first }
    func given(_ name: String) -> Bool {
        let names = spec(name)?.names ?? [name]
        return words.contains { word in
            names.contains { option in
                word == option || word.hasPrefix(option + "=") || (!option.hasPrefix("--") && !word.hasPrefix("--") && word.hasPrefix(option))
            }
        }
    }
    var kept: [String] = []
    var index = 0
    while index < defaults.count {
        let word = defaults[index]
        let isOption = word.hasPrefix("-") && word.count > 1
        let span = isOption && spec(word)?.takesValue == true ? 2 : 1
        if !(isOption && given(word)) { kept += defaults[index..<min(defaults.count, index + span)] }
        index += span
    }
    return kept
}

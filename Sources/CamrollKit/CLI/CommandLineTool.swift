import FoundationEssentials
import Glibc

/// The command line: parses argv, runs a command, turns every error into a message and an
/// exit status. Nothing here traps on bad input.
public enum CommandLineTool {
    static var subcommands: [String] { CommandTable.names }

    /// The process's entry: `argv` as the kernel gave it (see `utf8Arguments`), then `main`.
    public static func main(argumentCount: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>,
                            environment: [String: String]) -> ExitCode {
        switch utf8Arguments(count: argumentCount, argv) {
        case .success(let arguments):
            // A password in a URL: hidden from /proc/PID/cmdline now that it is copied, and the
            // user told that it was readable meanwhile.
            if WebAddress.hidePasswords(count: argumentCount, argv) && !arguments.contains("--quiet") {
                Console(environment: environment).warning(
                    "a password in a URL on the command line can be read by other users of this machine (ps, /proc) while camroll starts; "
                        + "put it in ~/.netrc (machine HOST login USER password PASSWORD) or give it with --user-from FILE|env:NAME instead")
            }
            return main(arguments: arguments, environment: environment)
        case .failure(let error):
            Console(environment: environment).error(error.message, hint: error.hint)
            return error.exitCode
        }
    }

    public static func main(arguments: [String], environment: [String: String]) -> ExitCode {
        let console = Console(colorMode: GlobalOptions.colorMode(in: Array(arguments.dropFirst())), environment: environment)
        let status = run(arguments: arguments, environment: environment, console: console)
        // `camroll list --json > out.json` on a full disk: not a success, whatever was done.
        if status == .success, let failure = Console.stdoutFailure {
            console.error("cannot write the output: \(failure.reason)")
            return .ioError
        }
        return status
    }

    static func run(arguments: [String], environment: [String: String], console: Console) -> ExitCode {
        signal(SIGPIPE, SIG_IGN)
        // Past a file-size limit (ulimit -f), write() should fail with EFBIG, which is reported,
        // rather than the process being killed.
        signal(SIGXFSZ, SIG_IGN)
        var rest = Array(arguments.dropFirst())
        let leadingGlobals = GlobalOptions.leading(&rest)
        // With --json, an error is also a JSON object on stdout, for scripts that read only that.
        let jsonErrors = arguments.dropFirst().prefix { $0 != "--" }.contains("--json")
        do {
            if rest.first == "--version" {
                console.out(Versions.text)
                return .success
            }
            if let first = rest.first, first.hasPrefix("__") {
                return try Generated.run(first, arguments: Array(rest.dropFirst()), console: console, environment: environment)
            }
            if rest == ["-h"] || rest == ["--help"] { throw HelpRequest(command: nil) }
            var command = "snap"
            if let first = rest.first, !first.hasPrefix("-") {
                guard subcommands.contains(first) else {
                    throw CamrollError.usage(
                        "unknown command '\(first)'", hint: "See 'camroll --help' for the commands.")
                }
                command = first
                rest.removeFirst()
            }
            rest = leadingGlobals + rest
            switch command {
            case "help":
                guard rest.count <= 1 else { throw CamrollError.usage("'help' takes at most one command name") }
                if let name = rest.first, !subcommands.contains(name) {
                    throw CamrollError.usage("unknown command '\(name)'", hint: "See 'camroll --help' for the commands.")
                }
                throw HelpRequest(command: rest.first)
            case "list", "show", "verify", "delete", "stats":
                return try CatalogCommands(command: command, arguments: rest, environment: environment).run()
            case "pick":
                let options = try SnapOptions.parse(rest, command: CommandTable.pick)
                return try PickCommand(options: options, environment: environment, arguments: arguments).run()
            case "devices", "formats", "check", "controls":
                return try DeviceCommands(command: command, arguments: rest, environment: environment).run()
            default:
                let options = try SnapOptions.parse(rest)
                return try SnapCommand(options: options, environment: environment, arguments: arguments).run()
            }
        } catch let help as HelpRequest {
            console.out(Help.text(for: help.command))
            return .success
        } catch {
            let failure = (error as? CamrollError)
                ?? CamrollError(.failure, (error as? DatabaseError).map { "catalog: \($0.message)" } ?? "\(error)")
            console.error(failure.message, hint: failure.hint)
            if jsonErrors { console.outRaw(jsonError(failure)) }
            return failure.exitCode
        }
    }

    /// The process's arguments as the kernel gave them, or a usage error for the first that is
    /// not UTF-8: Swift would repair its bytes to U+FFFD, and a path given so would reach the
    /// file system as another name than the one asked for (a photo saved under it, a file
    /// "not found").
    static func utf8Arguments(count: Int32, _ vector: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Result<[String], CamrollError> {
        var arguments: [String] = []
        for index in 0..<Int(count) {
            guard let pointer = vector[index] else { break }
            let bytes = UnsafeRawBufferPointer(start: pointer, count: strlen(pointer))
            guard let text = String(validating: bytes, as: UTF8.self) else {
                let shown = bytes.map { $0 < 0x80 ? String(UnicodeScalar($0)) : "\\x" + Format.hexByte($0) }.joined()
                // Text to draw (`--title`, `--title=…`), not a name: said so.
                let option = shown.hasPrefix("--") ? shown.prefix { $0 != "=" } : arguments.last?[...]
                if let option, ["--title", "--timestamp"].contains(option) {
                    return .failure(CamrollError.usage(
                        "the value of '\(option)' (argument \(index)) is not UTF-8: '\(shown)'",
                        hint: "camroll takes UTF-8 text only: convert it, e.g. with iconv -t UTF-8."))
                }
                return .failure(CamrollError.usage(
                    "argument \(index) is not UTF-8: '\(shown)'",
                    hint: "camroll takes UTF-8 names only; rename the file or directory, e.g. with convmv."))
            }
            arguments.append(text)
        }
        return .success(arguments)
    }

    /// `{"event":"error","message":…,"hint":…,"exit":N}` and a newline.
    static func jsonError(_ failure: CamrollError) -> String {
        var object: [String: Any] = ["event": "error", "message": failure.message, "exit": Int(failure.exitCode.rawValue)]
        if let hint = failure.hint { object["hint"] = hint }
        return JSONLine.encode(object)
    }
}

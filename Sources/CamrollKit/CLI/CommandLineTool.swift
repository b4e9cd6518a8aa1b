import Foundation

/// The command line: parses argv, runs a command, turns every error into a message and an
/// exit status. Nothing here traps on bad input.
public enum CommandLineTool {
    static let subcommands = [
        "snap", "devices", "formats", "check", "controls", "list", "show", "verify", "delete", "stats", "help",
    ]

    public static func main(arguments: [String], environment: [String: String]) -> ExitCode {
        signal(SIGPIPE, SIG_IGN)
        // Past a file-size limit (ulimit -f), write() should fail with EFBIG, which is reported,
        // rather than the process being killed.
        signal(SIGXFSZ, SIG_IGN)
        var rest = Array(arguments.dropFirst())
        let console = Console(colorMode: GlobalOptions.colorMode(in: rest), environment: environment)
        let leadingGlobals = GlobalOptions.leading(&rest)
        do {
            if rest.first == "--version" {
                console.out(Help.version + "\n")
                return .success
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
            case "devices", "formats", "check", "controls":
                return try DeviceCommands(command: command, arguments: rest, environment: environment).run()
            default:
                let options = try SnapOptions.parse(rest)
                return try SnapCommand(options: options, environment: environment, arguments: arguments).run()
            }
        } catch let help as HelpRequest {
            console.out(Help.text(for: help.command))
            return .success
        } catch let error as CamrollError {
            console.error(error.message, hint: error.hint)
            return error.exitCode
        } catch let error as DatabaseError {
            console.error("catalog: \(error.message)")
            return .failure
        } catch {
            console.error("\(error)")
            return .failure
        }
    }
}

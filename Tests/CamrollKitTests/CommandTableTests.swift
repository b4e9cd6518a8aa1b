@testable import CamrollKit
import Foundation
import Testing

/// The command table is the one source of the parsers, `--help`, the man page and the shell
/// completions: an option in one and not in the others fails here.
@Suite struct CommandTableTests {
    static func sample(_ kind: ValueKind) -> String {
        switch kind {
        case .source: "pattern"
        case .camera: "/dev/video0"
        case .file: "x.jpg"
        case .choices(let values): values.first ?? "x"
        case .command: "snap"
        default: "1"
        }
    }

    /// Parses `arguments` with the parser of `command`; the error, if any.
    static func parse(_ command: String, _ arguments: [String]) -> Error? {
        do {
            switch command {
            case "snap": _ = try SnapOptions.parse(arguments)
            case "pick": _ = try SnapOptions.parse(arguments, command: CommandTable.pick)
            case "devices", "formats", "check", "controls":
                _ = try DeviceCommands(command: command, arguments: arguments, environment: [:])
            case "help": return nil
            default: _ = try CatalogCommands(command: command, arguments: arguments, environment: [:])
            }
            return nil
        } catch {
            return error
        }
    }

    @Test func theCommandsNamesAreTheirSpecsNames() {
        #expect(CommandTable.names == CommandTable.commands.map(\.name))
    }

    @Test func everyOptionInTheTableIsHandledByItsParser() {
        for command in CommandTable.commands {
            for option in command.options + CommandTable.global {
                for name in option.names {
                    let arguments = [name] + (option.takesValue ? [Self.sample(option.kind)] : [])
                    let error = Self.parse(command.name, arguments)
                    let message = (error as? CamrollError)?.message ?? ""
                    #expect(!message.contains("does not handle"), "\(command.name) \(arguments): \(message)")
                    #expect(!message.contains("unknown option"), "\(command.name) \(arguments): \(message)")
                }
            }
            // And an option that is not in the table is unknown.
            let unknown = (Self.parse(command.name, ["--not-an-option"]) as? CamrollError)?.message ?? ""
            #expect(command.name == "help" || unknown.contains("unknown option '--not-an-option'"), "\(command.name)")
        }
    }

    /// Every option a parser's source names is in the table for that command.
    @Test func everyOptionAParserNamesIsInTheTable() throws {
        let sources = URL(fileURLWithPath: repositoryFile("Sources/CamrollKit/CLI"))
        let parsers = [("SnapOptions.swift", ["snap", "pick"]), ("DeviceCommands.swift", ["formats", "controls", "check"]),
                       ("CatalogCommands.swift", ["list", "show", "verify", "delete", "stats"]), ("GlobalOptions.swift", ["snap"])]
        let pattern = try NSRegularExpression(pattern: #"case "(--[a-z-]+)""#)
        for (file, commands) in parsers {
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            let names = pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap {
                Range($0.range(at: 1), in: text).map { String(text[$0]) }
            }
            #expect(!names.isEmpty, "\(file): no options found")
            for name in names {
                let known = commands.contains { CommandTable.command($0)?.option(named: name) != nil }
                #expect(known, "\(file) handles '\(name)', which the command table does not have")
            }
        }
    }

    @Test func helpManPageAndCompletionsNameEveryOption() {
        let man = ManPage.text
        let scripts = [("bash", Completions.bash), ("zsh", Completions.zsh), ("fish", Completions.fish)]
        for command in CommandTable.commands {
            let help = Help.text(for: command.name)
            #expect(man.contains(".SS \(command.name)"), "man page lacks \(command.name)")
            for (shell, script) in scripts {
                #expect(script.contains(command.name), "\(shell) completion lacks \(command.name)")
            }
            for option in command.options + CommandTable.global {
                for name in option.names {
                    #expect(help.contains(name), "'camroll \(command.name) --help' lacks \(name)")
                    #expect(man.contains(ManPage.escape(name)), "man page lacks \(name)")
                    #expect(Completions.bash.contains(name), "bash completion lacks \(name)")
                    #expect(Completions.zsh.contains(name), "zsh completion lacks \(name)")
                    let fishName = name.hasPrefix("--") ? "-l \(name.dropFirst(2))" : "-s \(name.dropFirst())"
                    #expect(Completions.fish.contains(fishName), "fish completion lacks \(name)")
                }
            }
        }
    }

    /// The catalog commands once shared one help page that left out --run, --json, --csv,
    /// --capture and --save.
    @Test func eachCommandHasItsOwnHelp() throws {
        for (command, options) in [("list", ["--run", "--limit", "--csv", "--json"]), ("show", ["--capture"]),
                                   ("delete", ["--save", "--capture", "--run", "--force"]), ("verify", ["--repair", "--run"])] {
            let result = try CamrollBinary.run([command, "--help"])
            #expect(result.status == 0)
            #expect(result.stdout.hasPrefix("OVERVIEW: "))
            for option in options { #expect(result.stdout.contains(option), "\(command) --help lacks \(option)") }
            #expect(try CamrollBinary.run(["help", command]).stdout == result.stdout)
        }
    }

    /// Scripting: errors as JSON with --json, `show last`, `list --limit`, `--version`.
    @Test func scriptingHelpers() throws {
        let dir = try TemporaryDirectory()
        for size in ["64x48", "128x96", "32x32"] {
            #expect(try CamrollBinary.run(["-d", "pattern", "-r", size, "-o", dir.file("\(size).jpg"), "--db", dir.file("c.db")]).status == 0)
        }
        let error = try CamrollBinary.run(["--json", "show", "99", "--db", dir.file("c.db")])
        #expect(error.status == 66)
        let object = try #require(JSONSerialization.jsonObject(with: Data(error.stdout.utf8)) as? [String: Any])
        #expect(object["event"] as? String == "error" && object["exit"] as? Int == 66)
        #expect((object["message"] as? String)?.contains("no run 99") == true)
        let last = try CamrollBinary.run(["show", "last", "--json", "--db", dir.file("c.db")])
        let run = try #require(JSONSerialization.jsonObject(with: Data(last.stdout.utf8)) as? [String: Any])
        #expect((run["run"] as? [String: Any])?["id"] as? Int == 3)
        let list = try CamrollBinary.run(["list", "--limit", "2", "--json", "--db", dir.file("c.db")])
        let rows = try #require(JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]])
        #expect(rows.map { $0["id"] as? Int } == [3, 2])
        let version = try CamrollBinary.run(["--version"])
        #expect(version.stdout.hasPrefix(Help.version + "\n") && version.stdout.contains("SQLite 3.")
                && version.stdout.contains("libjpeg-turbo ") && version.stdout.contains("xxHash "))
        let ids = try CamrollBinary.run(["__complete", "runs", "--db", dir.file("c.db")])
        #expect(ids.stdout == "3\n2\n1\n")
    }

    /// The bash completion, run in a real bash: commands, options, sources and run IDs.
    @Test func bashCompletesCommandsOptionsSourcesAndRunIDs() throws {
        let dir = try TemporaryDirectory()
        for name in ["a", "b"] {
            #expect(try CamrollBinary.run(["-d", "pattern", "-r", "64x48", "-o", dir.file("\(name).jpg"), "--db", dir.file("c.db")]).status == 0)
        }
        try FileManager.default.createDirectory(atPath: dir.file("bin"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: dir.file("bin/camroll"), withDestinationPath: CamrollBinary.path)
        try Completions.bash.write(toFile: dir.file("camroll.bash"), atomically: true, encoding: .utf8)
        let script = """
            source \(dir.file("camroll.bash"))
            complete -p camroll
            try() { COMP_WORDS=("$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); COMPREPLY=(); _camroll; echo "${COMPREPLY[*]}"; }
            try camroll sn
            try camroll snap --fs
            try camroll show --db \(dir.file("c.db")) ""
            try camroll -d pat
            try camroll list --l
            """
        let result = try CamrollBinary.runProgram(["/bin/bash", "-c", script], environment: ["PATH": dir.file("bin") + ":/usr/bin:/bin"])
        #expect(result.stdout.split(separator: "\n") == ["complete -F _camroll camroll", "snap", "--fsync", "last 2 1", "pattern", "--limit"],
                "\(result.stdout)\(result.stderr)")
    }

    /// zsh and fish read their scripts without a syntax error, where those shells are installed.
    @Test func zshAndFishScriptsParse() throws {
        let dir = try TemporaryDirectory()
        for (shell, script, file) in [("/usr/bin/zsh", Completions.zsh, "_camroll"), ("/usr/bin/fish", Completions.fish, "camroll.fish")]
        where FileManager.default.isExecutableFile(atPath: shell) {
            try script.write(toFile: dir.file(file), atomically: true, encoding: .utf8)
            let result = try CamrollBinary.runProgram([shell, "-n", dir.file(file)])
            #expect(result.status == 0, "\(shell): \(result.stderr)")
        }
    }
}

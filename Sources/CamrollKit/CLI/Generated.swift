import FoundationEssentials
import Glibc

/// Files generated from the command table at install time, and the answers the completions ask
/// for while a user types. Hidden commands, not in `--help`:
///   camroll __generate man|bash|zsh|fish    the man page or a completion script, on stdout
///   camroll __complete runs|captures|saves [--db PATH]    IDs from the catalog, newest first
enum Generated {
    static func run(_ name: String, arguments: [String], console: Console, environment: [String: String]) throws -> ExitCode {
        switch (name, arguments.first) {
        case ("__generate", "man"): console.outRaw(ManPage.text)
        case ("__generate", "bash"): console.outRaw(Completions.bash)
        case ("__generate", "zsh"): console.outRaw(Completions.zsh)
        case ("__generate", "fish"): console.outRaw(Completions.fish)
        case ("__complete", let what?):
            var database: String?
            if let index = arguments.firstIndex(of: "--db"), index + 1 < arguments.count { database = arguments[index + 1] }
            console.out(try ids(what, database: database, environment: environment).joined(separator: "\n") + "\n")
        default:
            throw CamrollError.usage("unknown command '\(name)'", hint: "See 'camroll --help' for the commands.")
        }
        return .success
    }

    /// The newest IDs first (at most 50), for the completion of `show`, `verify`, `delete`.
    static func ids(_ what: String, database: String?, environment: [String: String]) throws -> [String] {
        let table = ["runs": "runs", "captures": "captures", "saves": "saves"]
        guard let table = table[what] else { throw CamrollError.usage("__complete takes runs, captures or saves") }
        let path = try database.map { try UserDirectories.expandingTilde($0, environment: environment) }
            ?? Catalog.defaultPath(environment: environment)
        guard let absolute = try? AbsolutePath.resolve(path), FileManager.default.fileExists(atPath: absolute) else { return [] }
        let catalog = try Catalog(path: path, readOnly: true)
        let statement = try catalog.database.prepare("SELECT id FROM \(table) ORDER BY id DESC LIMIT 50")
        var ids: [String] = []
        while try statement.step() { ids.append(String(statement.int(0))) }
        return ids
    }
}

/// `camroll.1`, every command in one page.
enum ManPage {
    static var text: String {
        var page = """
            .TH CAMROLL 1 "" "\(Help.version)" "User Commands"
            .SH NAME
            camroll \\- take photos from V4L2 cameras and save them, once or N times, recording every save
            .SH SYNOPSIS
            .B camroll
            [\\fBsnap\\fR] [\\fIoptions\\fR]
            .br
            .B camroll
            \\fIcommand\\fR [\\fIoptions\\fR]
            .SH DESCRIPTION
            camroll takes photos from V4L2 cameras (USB webcams and anything the kernel exposes as
            /dev/videoN), the built\\-in test pattern or a JPEG file, and saves them once or N times,
            each file written atomically and recorded in an SQLite catalog. It doubles as a storage
            tester: \\fBverify\\fR reads every file back and proves nothing was lost.
            .SH COMMANDS

            """
        for command in CommandTable.commands {
            page += ".SS \(escape(command.name))\n"
            page += command.usage.map { ".B \(escape($0))\n" }.joined(separator: ".br\n")
            page += ".PP\n\(escape(command.overview))\n"
            for argument in command.arguments {
                page += ".TP\n.I \(escape(argument.name))\n\(escape(argument.help))\n"
            }
            for section in command.sections {
                for option in section.options {
                    page += ".TP\n\(optionLabel(option))\n\(escape(option.help))\n"
                }
            }
            if !command.discussion.isEmpty { page += ".PP\n\(escape(command.discussion))\n" }
        }
        page += ".SH GLOBAL OPTIONS\n"
        for option in CommandTable.global {
            page += ".TP\n\(optionLabel(option))\n\(escape(option.help))\n"
        }
        page += ".TP\n.B \\-\\-version\nShow the version, and those of the C libraries in use.\n"
        page += """
            .SH EXIT STATUS
            0 ok; 1 verify found problems, or a generic failure; 64 usage; 65 bad data (corrupt
            frame, input or catalog; a download that is not a picture); 66 no such device, file or
            URL; 68 a URL's host not found; 69 device busy, no camera, catalog locked, a server
            refusing or failing; 73 cannot create output; 74 I/O error (ENOSPC, EIO, camera
            unplugged, download cut short); 75 no frame (or no download progress) within
            \\-\\-timeout; 76 protocol error (redirect loop, unexpected HTTP status, TLS); 77
            permission denied; 129 SIGHUP; 130 SIGINT; 143 SIGTERM.
            .SH FILES
            .TP
            .I $XDG_DATA_HOME/camroll/catalog.sqlite3
            The catalog (tables runs, captures, saves, sources), with its run locks in
            .IR catalog.sqlite3.runs\\-lock .
            .TP
            .I $XDG_PICTURES_DIR/camroll/
            Where photos go by default.
            .TP
            .I $XDG_CACHE_HOME/camroll/
            Pictures downloaded from URLs (\\-d https://...), reused while the server says they are current.
            .SH EXAMPLES
            .nf
            camroll snap \\-d pattern \\-o /tmp/shots/{seq}.jpg
            camroll snap \\-d /dev/video0 \\-r 1280x720 \\-q 85
            camroll snap \\-d pattern \\-r 1920x1080 \\-n 10000 \\-\\-stamp \\-o /mnt/sd/{seq}.jpg
            camroll snap \\-d file:IMG_0042.jpg \\-\\-crop 413:626 \\-r 413x626 \\-o passport.jpg
            camroll verify \\-\\-run 3
            .fi

            """
        return page
    }

    static func optionLabel(_ option: OptionSpec) -> String {
        let names = option.names.map { "\\fB\(escape($0))\\fR" }.joined(separator: ", ")
        return names + (option.value.map { " \\fI\(escape($0))\\fR" } ?? "")
    }

    /// roff: a backslash is `\e`, a hyphen `\-`, a line may not start with `.` or `'`.
    static func escape(_ text: String) -> String {
        let escaped = text.replacing("\\", with: "\\e").replacing("-", with: "\\-")
        return escaped.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.hasPrefix(".") || line.hasPrefix("'") ? "\\&" + line : String(line)
        }.joined(separator: "\n")
    }
}

/// bash, zsh and fish completion scripts: the commands, each one's options, and values by kind
/// (cameras found in /dev, `pattern`, `file:` paths, run IDs from the catalog).
enum Completions {
    static var bash: String {
        let names = CommandTable.commands.map(\.name)
        var script = """
            # bash completion for camroll, generated from its command table (camroll __generate bash)
            _camroll_ids() {
                local db="" i
                for ((i = 1; i < COMP_CWORD; i++)); do
                    [[ ${COMP_WORDS[i]} == --db ]] && db=${COMP_WORDS[i + 1]}
                done
                camroll __complete "$1" ${db:+--db "$db"} 2>/dev/null
            }
            _camroll() {
                local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]} command="" options="" i
                local commands="\(names.joined(separator: " "))"
                local global="\(CommandTable.global.flatMap(\.names).joined(separator: " ")) --version"
                for ((i = 1; i < COMP_CWORD; i++)); do
                    case ${COMP_WORDS[i]} in
                        \(names.joined(separator: "|"))) command=${COMP_WORDS[i]}; break ;;
                    esac
                done
                case ${command:-snap} in

            """
        for command in CommandTable.commands {
            script += "        \(command.name))\n"
            script += "            options=\"\(command.options.flatMap(\.names).joined(separator: " "))\"\n"
            script += "            case $prev in\n"
            for option in command.options + CommandTable.global where option.takesValue {
                script += "                \(option.names.joined(separator: "|"))) \(bashValue(option.kind)); return ;;\n"
            }
            script += "            esac ;;\n"
        }
        script += """
                esac
                if [[ $cur == -* ]]; then
                    COMPREPLY=($(compgen -W "$options $global" -- "$cur"))
                    return
                fi
                case $command in
                    "") COMPREPLY=($(compgen -W "$commands" -- "$cur")) ;;

            """
        for command in CommandTable.commands {
            guard let argument = command.arguments.first else { continue }
            script += "        \(command.name)) \(bashValue(argument.kind)) ;;\n"
        }
        script += """
                esac
            }
            complete -F _camroll camroll

            """
        return script
    }

    private static func bashValue(_ kind: ValueKind) -> String {
        switch kind {
        case .none, .text: return "COMPREPLY=()"
        case .source:
            return #"if [[ $cur == file:* ]]; then COMPREPLY=($(compgen -P file: -f -- "${cur#file:}")); else COMPREPLY=($(compgen -W "pattern file: $(ls /dev/video* 2>/dev/null)" -- "$cur")); fi"#
        case .camera: return #"COMPREPLY=($(compgen -W "$(ls /dev/video* 2>/dev/null)" -- "$cur"))"#
        case .file: return #"COMPREPLY=($(compgen -f -- "$cur"))"#
        case .runID: return #"COMPREPLY=($(compgen -W "last $(_camroll_ids runs)" -- "$cur"))"#
        case .captureID: return #"COMPREPLY=($(compgen -W "last $(_camroll_ids captures)" -- "$cur"))"#
        case .saveID: return #"COMPREPLY=($(compgen -W "$(_camroll_ids saves)" -- "$cur"))"#
        case .command: return #"COMPREPLY=($(compgen -W "$commands" -- "$cur"))"#
        case .choices(let values): return "COMPREPLY=($(compgen -W \"\(values.joined(separator: " "))\" -- \"$cur\"))"
        }
    }

    static var zsh: String {
        var script = """
            #compdef camroll
            # zsh completion for camroll, generated from its command table (camroll __generate zsh)
            _camroll_ids() {
                local -a ids
                ids=(${(f)"$(camroll __complete $1 ${opt_args[--db]:+--db ${opt_args[--db]}} 2>/dev/null)"})
                compadd -a ids
            }
            _camroll_sources() {
                if [[ $PREFIX == file:* ]]; then
                    compset -P 'file:'
                    _files
                else
                    compadd pattern /dev/video*(N)
                    compadd -S '' file:
                fi
            }
            _camroll() {
                local -a commands
                commands=(

            """
        for command in CommandTable.commands {
            script += "        '\(command.name):\(zshQuote(command.abstract))'\n"
        }
        script += """
                )
                local -a global
                global=(

            """
        for option in CommandTable.global { script += "        \(zshSpec(option))\n" }
        script += """
                )
                if (( CURRENT == 2 )) && [[ $words[2] != -* ]]; then
                    _describe 'command' commands
                    return
                fi
                local command=snap
                (( ${commands[(I)$words[2]:*]} )) && command=$words[2] && shift words && (( CURRENT-- ))
                case $command in

            """
        for command in CommandTable.commands {
            script += "        \(command.name))\n            _arguments -s $global \\\n"
            for option in command.options { script += "                \(zshSpec(option)) \\\n" }
            if let argument = command.arguments.first {
                script += "                '*:\(zshQuote(argument.name)):\(zshAction(argument.kind))' \\\n"
            }
            script += "                && return\n            ;;\n"
        }
        script += """
                esac
            }
            _camroll "$@"

            """
        return script
    }

    private static func zshQuote(_ text: String) -> String {
        text.replacing("'", with: "'\\''").replacing(":", with: "\\:")
            .replacing("[", with: "\\[").replacing("]", with: "\\]")
    }

    private static func zshSpec(_ option: OptionSpec) -> String {
        // `{-d,--device}` unquoted, so that the shell expands it into one spec per name.
        let names = option.names.count > 1 ? "{\(option.names.joined(separator: ","))}" : "'\(option.id)'"
        let help = "[\(zshQuote(String(option.help.prefix(70))))]"
        guard let value = option.value else { return "\(names)'\(help)'" }
        return "\(names)'\(help):\(zshQuote(value)):\(zshAction(option.kind))'"
    }

    private static func zshAction(_ kind: ValueKind) -> String {
        switch kind {
        case .none, .text: return " "
        case .source: return "_camroll_sources"
        case .camera: return "_files -g \"/dev/video*\""
        case .file: return "_files"
        case .runID: return "_camroll_ids runs"
        case .captureID: return "_camroll_ids captures"
        case .saveID: return "_camroll_ids saves"
        case .command: return "(\(CommandTable.commands.map(\.name).joined(separator: " ")))"
        case .choices(let values): return "(\(values.joined(separator: " ")))"
        }
    }

    static var fish: String {
        var script = """
            # fish completion for camroll, generated from its command table (camroll __generate fish)
            function __camroll_ids
                set -l db (string match -r -- '--db\\s+\\S+' (commandline -cp) | string replace -r -- '--db\\s+' '')
                if test -n "$db"
                    camroll __complete $argv[1] --db $db 2>/dev/null
                else
                    camroll __complete $argv[1] 2>/dev/null
                end
            end
            complete -c camroll -f
            complete -c camroll -l version -d 'Show the version'

            """
        let names = CommandTable.commands.map(\.name).joined(separator: " ")
        for command in CommandTable.commands {
            script += "complete -c camroll -n 'not __fish_seen_subcommand_from \(names)' -a \(command.name) -d '\(fishQuote(command.abstract))'\n"
        }
        for option in CommandTable.global {
            script += fishLine(option, condition: nil)
        }
        for command in CommandTable.commands {
            let condition = command.name == "snap"
                ? "__fish_seen_subcommand_from snap; or not __fish_seen_subcommand_from \(names)"
                : "__fish_seen_subcommand_from \(command.name)"
            for option in command.options { script += fishLine(option, condition: condition) }
            if let argument = command.arguments.first {
                script += "complete -c camroll -n '\(condition)' \(fishValue(argument.kind))\n"
            }
        }
        return script
    }

    private static func fishQuote(_ text: String) -> String { text.replacing("'", with: "\\'") }

    private static func fishLine(_ option: OptionSpec, condition: String?) -> String {
        var line = "complete -c camroll"
        if let condition { line += " -n '\(condition)'" }
        for name in option.names {
            line += name.hasPrefix("--") ? " -l \(name.dropFirst(2))" : " -s \(name.dropFirst())"
        }
        if option.takesValue { line += " -r " + fishValue(option.kind) }
        return line + " -d '\(fishQuote(String(option.help.prefix(60))))'\n"
    }

    private static func fishValue(_ kind: ValueKind) -> String {
        switch kind {
        case .none, .text: return "-a ''"
        // A glob that matches nothing is an error in fish, except in `for`.
        case .source: return "-a 'pattern file: (for f in /dev/video*; echo $f; end)' -F"
        case .camera: return "-a '(for f in /dev/video*; echo $f; end)'"
        case .file: return "-F"
        case .runID: return "-a 'last (__camroll_ids runs)'"
        case .captureID: return "-a 'last (__camroll_ids captures)'"
        case .saveID: return "-a '(__camroll_ids saves)'"
        case .command: return "-a '\(CommandTable.commands.map(\.name).joined(separator: " "))'"
        case .choices(let values): return "-a '\(values.joined(separator: " "))'"
        }
    }
}

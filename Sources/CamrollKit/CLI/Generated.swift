import FoundationEssentials
import Glibc

/// Files generated from the command table at install time, and the answers the completions ask
/// for while a user types. Hidden commands, not in `--help`:
///   camroll __generate man|bash|zsh|fish    the man page or a completion script, on stdout
///   camroll __complete runs|captures|saves [--db PATH]    IDs from the catalog, newest first
///   camroll __complete controls|sizes [-d DEV]    a camera's control names, its frame sizes
enum Generated {
    static func run(_ name: String, arguments: [String], console: Console, environment: [String: String]) throws -> ExitCode {
        switch (name, arguments.first) {
        case ("__generate", "man"): console.outRaw(ManPage.text)
        case ("__generate", "bash"): console.outRaw(Completions.bash)
        case ("__generate", "zsh"): console.outRaw(Completions.zsh)
        case ("__generate", "fish"): console.outRaw(Completions.fish)
        case ("__complete", "controls"), ("__complete", "sizes"):
            var device: String?
            if let index = arguments.firstIndex(where: { $0 == "-d" || $0 == "--device" }), index + 1 < arguments.count {
                device = arguments[index + 1]
            }
            let words = cameraWords(arguments[0], device: device)
            if !words.isEmpty { console.out(words.joined(separator: "\n") + "\n") }
        case ("__complete", let what?):
            var database: String?
            if let index = arguments.firstIndex(of: "--db"), index + 1 < arguments.count { database = arguments[index + 1] }
            console.out(try ids(what, database: database, environment: environment).joined(separator: "\n") + "\n")
        default:
            throw CamrollError.usage("unknown command '\(name)'", hint: "See 'camroll --help' for the commands.")
        }
        return .success
    }

    /// The control names (`controls`) or frame sizes, largest first (`sizes`), of the camera
    /// `device` names (or the first camera), for the completion of `--set` and `-r`. Nothing for
    /// a source that is not a camera, or a camera that cannot be opened: a completion has no
    /// one to tell. Asked without libv4l2 (the camera's own formats, no emulated ones), and by
    /// the completions under a time limit (100 ms).
    static func cameraWords(_ what: String, device: String?) -> [String] {
        let path: String
        switch try? device.map(DeviceChoice.init(parsing:)) ?? .firstCamera {
        case .camera(let named): path = named
        case .firstCamera: guard let first = DeviceList.firstCamera() else { return [] }; path = first
        default: return []
        }
        guard AccessCheck.examine(path: path).ok, let camera = try? V4L2Device(path: path, throughLibv4l2: false) else { return [] }
        if what == "controls" { return CameraControls(device: camera).list().map(\.name) }
        var sizes: [Resolution] = []
        for format in camera.formats() where !format.emulated {
            for size in camera.sizes(for: format.format) where !sizes.contains(size) { sizes.append(size) }
        }
        return sizes.sorted { $0.width * $0.height > $1.width * $1.height }.map(\.description)
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
            camroll takes photos and saves them once or N times, each file written atomically and
            recorded in an SQLite catalog. It doubles as a storage tester: \\fBverify\\fR reads
            every file back and proves nothing was lost.
            .PP
            Where the picture comes from (\\fB\\-d\\fR):
            .TP
            .B a camera
            A V4L2 camera: a USB webcam or anything the kernel exposes as /dev/videoN, named as
            /dev/videoN, N or its /dev/v4l/by\\-id name (\\fBcamroll devices\\fR lists them); the
            first camera when \\fB\\-d\\fR is not given. Its MJPEG frames are saved as they come,
            YUYV and other formats encoded as JPEG; warm\\-up frames are skipped until the picture
            settles. \\fBcamroll pick\\fR shows it live in the terminal first.
            .TP
            .B pattern
            The built\\-in test pattern, YUYV, any even width: no camera needed.
            .TP
            .BI file: PATH
            A picture file: a JPEG, saved byte for byte unless \\fB\\-r\\fR, \\fB\\-\\-crop\\fR or
            \\fB\\-q\\fR change it, or a PNG (read with libspng), encoded as JPEG.
            .TP
            .B an http:// or https:// URL
            A JPEG or PNG downloaded once (with libcurl) and kept in the cache; fetched again only when
            the server says it changed, or never with \\fB\\-\\-offline\\fR.
            .PP
            What comes out:
            .TP
            .B JPEG files
            Named by the \\fB\\-o\\fR template, each written to a temporary name, then renamed into
            place (synced with \\fB\\-\\-fsync\\fR); an existing file is never replaced without
            \\fB\\-\\-overwrite\\fR. \\fB\\-o \\-\\fR sends the JPEG to standard output instead.
            .TP
            .B the catalog
            A row for every run, capture (with a thumbnail) and save, with its size, XXH3\\-128 digest
            and duration; \\fBlist\\fR, \\fBshow\\fR, \\fBstats\\fR, \\fBverify\\fR and
            \\fBdelete\\fR read and keep it, and sqlite3 can query it.
            .TP
            .B what is printed
            For one photo, one line: its path, size and bytes; for more (or with \\fB\\-\\-stats\\fR),
            saves/s, MB/s (the bytes saved over the saving time), latency percentiles and the run's
            number. Progress goes to stderr. \\fB\\-\\-json\\fR gives JSON (NDJSON events while
            saving), \\fBlist \\-\\-csv\\fR CSV, and \\fBstats \\-\\-plot\\fR writes a run's charts
            as SVG or PNG (with librsvg).
            .PP
            The commands:

            """
        for command in CommandTable.commands {
            page += ".TP\n.B \(escape(command.name))\n\(escape(command.abstract))\n"
        }
        page += """
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
        page += ".TP\n.B \\-\\-version\nShow the version, and those of the C libraries it links and of those it loads when needed (or '(not installed)').\n"
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
            The catalog (tables runs, captures, thumbnails, saves, sources, run_events), with its run locks in
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

            # The words as camroll takes them: bash splits a word at the ':' of COMP_WORDBREAKS
            # (file:/tmp is file, :, /tmp to it), so those are joined again, into `words`, and
            # `cword` is the index of the word being completed.
            _camroll_words() {
                words=() cword=0
                local i join=0
                for ((i = 0; i < ${#COMP_WORDS[@]}; i++)); do
                    local word=${COMP_WORDS[i]}
                    if (( i > 0 )) && [[ $word =~ ^:+$ ]]; then
                        words[${#words[@]} - 1]+=$word
                        join=1
                    elif (( join )); then
                        words[${#words[@]} - 1]+=$word
                        join=0
                    else
                        words+=("$word")
                    fi
                    (( i == COMP_CWORD )) && cword=$(( ${#words[@]} - 1 ))
                done
                (( COMP_CWORD >= ${#COMP_WORDS[@]} )) && words+=("") && cword=$(( ${#words[@]} - 1 ))
            }
            # What bash replaces is its own current word, after the last ':' (as
            # bash-completion's __ltrim_colon_completions has it): the completions lose what of
            # `cur` comes before that word. (Nothing, where COMP_WORDBREAKS has no ':'.)
            _camroll_ltrim_colon() {
                local raw=${COMP_WORDS[COMP_CWORD]} i
                [[ $raw =~ ^:+$ ]] && raw=""
                local before=${cur%"$raw"}
                [[ $before == *: ]] || return 0
                for i in "${!COMPREPLY[@]}"; do COMPREPLY[i]=${COMPREPLY[i]#"$before"}; done
            }
            # Paths that begin with $2, after the prefix $1 (file:); directories with their '/'.
            _camroll_paths() {
                local path
                COMPREPLY=()
                while IFS= read -r path; do
                    [[ -d $path ]] && path+=/
                    COMPREPLY+=("$1$path")
                done < <(compgen -f -- "$2")
                [[ ${#COMPREPLY[@]} == 1 && ${COMPREPLY[0]} == */ ]] && compopt -o nospace 2>/dev/null
                return 0
            }
            _camroll_ids() {
                local db="" i
                for ((i = 1; i < cword; i++)); do
                    [[ ${words[i]} == --db ]] && db=${words[i + 1]}
                done
                camroll __complete "$1" ${db:+--db "$db"} 2>/dev/null
            }
            # The chosen camera's control names or sizes ($1), if it answers within 100 ms.
            _camroll_camera() {
                local device="" i
                for ((i = 1; i < cword; i++)); do
                    case ${words[i]} in
                        -d|--device) device=${words[i + 1]}; [[ $device == = ]] && device=${words[i + 2]} ;;
                        -d?*) device=${words[i]#-d} ;;
                    esac
                done
                case $device in pattern|file:*|[Hh][Tt][Tt][Pp]://*|[Hh][Tt][Tt][Pp][Ss]://*) return ;; esac
                if command -v timeout >/dev/null 2>&1; then
                    timeout 0.1 camroll __complete "$1" ${device:+-d "$device"} 2>/dev/null
                else
                    camroll __complete "$1" ${device:+-d "$device"} 2>/dev/null
                fi
            }
            _camroll_reply() {
                local command="" options="" i
                local commands="\(names.joined(separator: " "))"
                local global="\(CommandTable.global.flatMap(\.names).joined(separator: " ")) --version"
                for ((i = 1; i < cword; i++)); do
                    case ${words[i]} in
                        \(names.joined(separator: "|"))) command=${words[i]}; break ;;
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
            _camroll() {
                local words cword
                _camroll_words
                local cur=${words[cword]} prev=${words[cword - 1]}
                COMPREPLY=()
                _camroll_reply
                _camroll_ltrim_colon
            }
            complete -F _camroll camroll

            """
        return script
    }

    private static func bashValue(_ kind: ValueKind) -> String {
        switch kind {
        case .none, .text: return "COMPREPLY=()"
        case .source:
            return #"if [[ $cur == file:* ]]; then _camroll_paths file: "${cur#file:}"; else COMPREPLY=($(compgen -W "pattern file: $(ls /dev/video* 2>/dev/null)" -- "$cur")); [[ ${COMPREPLY[*]} == file: ]] && compopt -o nospace 2>/dev/null; fi"#
        case .camera: return #"COMPREPLY=($(compgen -W "$(ls /dev/video* 2>/dev/null)" -- "$cur"))"#
        case .cameraOrPattern: return #"COMPREPLY=($(compgen -W "pattern $(ls /dev/video* 2>/dev/null)" -- "$cur"))"#
        case .file: return #"_camroll_paths "" "$cur""#
        case .control: return #"COMPREPLY=($(compgen -S = -W "$(_camroll_camera controls)" -- "$cur")); compopt -o nospace 2>/dev/null"#
        case .size: return #"COMPREPLY=($(compgen -W "$(_camroll_camera sizes)" -- "$cur"))"#
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
            # The chosen camera's control names or sizes ($1), if it answers within 100 ms.
            _camroll_camera() {
                local device=${opt_args[-d]:-${opt_args[--device]}}
                [[ $device == (pattern|file:*|http://*|https://*) ]] && return
                local -a found
                found=(${(f)"$(timeout 0.1 camroll __complete $1 ${device:+-d $device} 2>/dev/null)"})
                if [[ $1 == controls ]]; then compadd -S = -a found; else compadd -a found; fi
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
        if option.valueIsOptional { return "\(names)'\(help)::\(zshQuote(value)):\(zshAction(option.kind))'" }
        return "\(names)'\(help):\(zshQuote(value)):\(zshAction(option.kind))'"
    }

    private static func zshAction(_ kind: ValueKind) -> String {
        switch kind {
        case .none, .text: return " "
        case .source: return "_camroll_sources"
        case .camera: return "_files -g \"/dev/video*\""
        case .cameraOrPattern: return "_alternative 'pattern:source:(pattern)' 'cameras:camera:_files -g \"/dev/video*\"'"
        case .file: return "_files"
        case .runID: return "_camroll_ids runs"
        case .captureID: return "_camroll_ids captures"
        case .saveID: return "_camroll_ids saves"
        case .command: return "(\(CommandTable.commands.map(\.name).joined(separator: " ")))"
        case .choices(let values): return "(\(values.joined(separator: " ")))"
        case .control: return "_camroll_camera controls"
        case .size: return "_camroll_camera sizes"
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
            # The chosen camera's control names or sizes, if it answers within 100 ms.
            function __camroll_camera
                set -l words (commandline -opc)
                set -l device
                for i in (seq (count $words))
                    if contains -- $words[$i] -d --device; and test $i -lt (count $words)
                        set device $words[(math $i + 1)]
                    end
                end
                string match -qr -- '^(pattern|file:|https?://)' "$device"; and return
                if test -n "$device"
                    timeout 0.1 camroll __complete $argv[1] -d $device 2>/dev/null
                else
                    timeout 0.1 camroll __complete $argv[1] 2>/dev/null
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
        case .cameraOrPattern: return "-a 'pattern (for f in /dev/video*; echo $f; end)'"
        case .file: return "-F"
        case .runID: return "-a 'last (__camroll_ids runs)'"
        case .captureID: return "-a 'last (__camroll_ids captures)'"
        case .saveID: return "-a '(__camroll_ids saves)'"
        case .command: return "-a '\(CommandTable.commands.map(\.name).joined(separator: " "))'"
        case .choices(let values): return "-a '\(values.joined(separator: " "))'"
        case .control: return "-a '(__camroll_camera controls | string replace -r \\$ =)'"
        case .size: return "-a '(__camroll_camera sizes)'"
        }
    }
}

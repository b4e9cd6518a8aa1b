/// `--help` for each command, generated from the command table in swift-argument-parser's
/// layout: OVERVIEW, USAGE, ARGUMENTS, OPTIONS (or the command's own sections), GLOBAL OPTIONS.
enum Help {
    static let version = "camroll 0.3.0"

    static func text(for command: String?) -> String {
        guard let command, let spec = CommandTable.command(command) else { return overview }
        var text = "OVERVIEW: " + wrapped(spec.overview, indent: 10, first: 10) + "\n\n"
        text += "USAGE: " + spec.usage.joined(separator: "\n       ") + "\n\n"
        if !spec.arguments.isEmpty {
            text += "ARGUMENTS:\n" + spec.arguments.map { row($0.name, $0.help) }.joined() + "\n"
        }
        for section in spec.sections where !section.options.isEmpty {
            text += section.title + ":\n" + section.options.map { row($0.synopsis, $0.help) }.joined() + "\n"
        }
        text += "GLOBAL OPTIONS:\n" + CommandTable.global.map { row($0.synopsis, $0.help) }.joined()
        if !spec.discussion.isEmpty { text += "\n" + spec.discussion + "\n" }
        return text + "\n"
    }

    static var overview: String {
        var text = """
            OVERVIEW: Take photos from V4L2 cameras and save them, once or N times, recording every
            save in an SQLite catalog.

            USAGE: camroll [snap] [<options>]
                   camroll <command> [<options>]

            COMMANDS:

            """
        for command in CommandTable.commands { text += row(command.name, command.abstract) }
        text += "\nGLOBAL OPTIONS:\n" + CommandTable.global.map { row($0.synopsis, $0.help) }.joined()
        text += row("--version", "Show the version, and those of the C libraries it links and of those it loads when needed (or '(not installed)').")
        text += """

            EXAMPLES:
              camroll snap -d pattern -o /tmp/shots/{seq}.jpg
              camroll snap -d pattern -r 1920x1080 -n 10000 --stamp -o /mnt/sd/{seq}.jpg
              camroll --json list --limit 5

              See 'camroll help <command>' for detailed help.


            """
        return text
    }

    /// `  -d, --device <dev>      help…`, the help wrapped at 100 columns under itself.
    static func row(_ label: String, _ help: String) -> String {
        let column = 26
        let head = "  " + label
        if head.count + 2 > column {
            return head + "\n" + String(repeating: " ", count: column) + wrapped(help, indent: column, first: column) + "\n"
        }
        return head.padded(to: column) + wrapped(help, indent: column, first: column) + "\n"
    }

    /// `text` in lines of at most 100 columns; lines after the first indented by `indent`.
    static func wrapped(_ text: String, indent: Int, first: Int, width: Int = 100) -> String {
        var lines: [String] = []
        var line = ""
        var room = width - first
        for word in text.split(whereSeparator: { $0 == " " || $0 == "\n" }) {
            if !line.isEmpty && line.count + 1 + word.count > room {
                lines.append(line)
                line = ""
                room = width - indent
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        if !line.isEmpty { lines.append(line) }
        return lines.joined(separator: "\n" + String(repeating: " ", count: indent))
    }
}

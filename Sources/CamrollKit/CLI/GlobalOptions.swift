/// Options every command takes.
public struct GlobalOptions: Sendable {
    public var json = false
    public var quiet = false
    public var noProgress = false
    public var color: Console.ColorMode = .auto

    /// Applies `option` if it is a global one; false if it is not.
    mutating func apply(_ option: OptionSpec, value: String?, _ scanner: ArgumentScanner) throws -> Bool {
        switch option.id {
        case "--json": json = true
        case "--quiet": quiet = true
        case "--no-progress": noProgress = true
        case "--color":
            guard let value, let mode = Console.ColorMode(rawValue: value) else {
                throw scanner.usageError("invalid value '\(value ?? "")' for '--color': expected auto, always or never")
            }
            color = mode
        default: return false
        }
        return true
    }

    /// Options that contradict each other are refused, not resolved silently.
    func validate(_ scanner: ArgumentScanner) throws {
        if json && quiet { throw scanner.usageError("'--json' and '--quiet' cannot be used together") }
    }

    /// The global options written before the command's name (`camroll --json list`), taken off
    /// the front of `arguments`; the command parses them with the rest.
    static func leading(_ arguments: inout [String]) -> [String] {
        var taken: [String] = []
        while let first = arguments.first {
            if ["--json", "--quiet", "--no-progress"].contains(first) || first.hasPrefix("--color=") {
                taken.append(arguments.removeFirst())
            } else if first == "--color", arguments.count >= 2 {
                taken += arguments.prefix(2)
                arguments.removeFirst(2)
            } else {
                break
            }
        }
        return taken
    }

    /// The `--color` mode anywhere on the line (the last one wins), for messages printed before
    /// or without a command's own parse; `.auto` when absent or invalid.
    static func colorMode(in arguments: [String]) -> Console.ColorMode {
        var mode = Console.ColorMode.auto
        var index = 0
        while index < arguments.count, arguments[index] != "--" {
            let argument = arguments[index]
            if argument == "--color", index + 1 < arguments.count {
                mode = Console.ColorMode(rawValue: arguments[index + 1]) ?? mode
                index += 1
            } else if argument.hasPrefix("--color=") {
                mode = Console.ColorMode(rawValue: String(argument.dropFirst(8))) ?? mode
            }
            index += 1
        }
        return mode
    }
}

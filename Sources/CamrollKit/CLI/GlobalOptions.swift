/// Options every command takes.
public struct GlobalOptions: Sendable {
    public var json = false
    public var quiet = false
    public var noProgress = false
    public var color: Console.ColorMode = .auto

    /// Consumes `token` if it is a global option; false if it is not one.
    mutating func parse(_ token: ArgumentScanner.Token, _ scanner: inout ArgumentScanner) throws -> Bool {
        guard case .option(let name, let inline) = token else { return false }
        switch name {
        case "--json": json = true
        case "--quiet": quiet = true
        case "--no-progress": noProgress = true
        case "--color":
            let value = try scanner.value(for: name, inline: inline)
            guard let mode = Console.ColorMode(rawValue: value) else {
                throw scanner.usageError("invalid value '\(value)' for '--color': expected auto, always or never")
            }
            color = mode
        default: return false
        }
        if inline != nil && name != "--color" {
            throw scanner.usageError("'\(name)' takes no value")
        }
        return true
    }
}

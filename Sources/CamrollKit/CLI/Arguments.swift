import Glibc

/// Walks argv the way swift-argument-parser does: `--opt value`, `--opt=value`, `-o value`,
/// `-ovalue`, and `--` to end options.
struct ArgumentScanner {
    enum Token: Equatable {
        case option(String, inlineValue: String?)
        case positional(String)
    }

    private var arguments: [String]
    private var index = 0
    private var optionsEnded = false
    let command: String
    /// The options with a value given so far (by id), as typed and with their value.
    private var given: [String: (typed: String, value: String)] = [:]

    init(_ arguments: [String], command: String) {
        self.arguments = arguments
        self.command = command
    }

    mutating func next() -> Token? {
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if optionsEnded || argument == "-" || !argument.hasPrefix("-") {
                return .positional(argument)
            }
            if argument == "--" {
                optionsEnded = true
                continue
            }
            if argument.hasPrefix("--") {
                if let equals = argument.firstIndex(of: "=") {
                    return .option(String(argument[..<equals]), inlineValue: String(argument[argument.index(after: equals)...]))
                }
                return .option(argument, inlineValue: nil)
            }
            // -n5 → -n with 5; a negative number is a value, not an option, only after an option.
            let name = String(argument.prefix(2))
            let rest = argument.dropFirst(2)
            return .option(name, inlineValue: rest.isEmpty ? nil : String(rest))
        }
        return nil
    }

    enum Parsed {
        /// The option, its value, and the name as typed (`-n` or `--count`), for messages.
        case option(OptionSpec, value: String?, typed: String)
        case positional(String)
    }

    /// The next option of `command` (looked up in the command table, with the global options)
    /// with its value, or a positional argument. An option the table does not have for this
    /// command is a usage error.
    mutating func next(in command: CommandSpec) throws -> Parsed? {
        guard let token = next() else { return nil }
        switch token {
        case .positional(let word): return .positional(word)
        case .option(let name, let inline):
            guard let option = command.option(named: name) else {
                // One of snap's that this command leaves out (pick's --fill, --frames): say whose it is.
                if command.name != "snap", CommandTable.snap.option(named: name) != nil {
                    throw CamrollError.usage(
                        "'\(name)' is not an option of 'camroll \(command.name)'",
                        hint: "It is one of 'camroll snap': camroll snap \(name) …; see 'camroll \(command.name) --help'.")
                }
                throw usageError("unknown option '\(name)'")
            }
            if option.valueIsOptional {
                let value = inline ?? optionalValue()
                if let first = given[option.id] {
                    throw usageError("'\(first.typed)' and '\(name)' both given; give one")
                }
                given[option.id] = (name, value ?? "")
                return .option(option, value: value, typed: name)
            }
            if !option.takesValue {
                if inline != nil { throw usageError("'\(name)' takes no value") }
                return .option(option, value: nil, typed: name)
            }
            let value = try value(for: name, inline: inline)
            // `-d pattern -d file:x`: which was meant is not for camroll to guess. (The global
            // options keep their last value, as before the command's name.)
            if !option.repeatable && !CommandTable.global.contains(where: { $0.id == option.id }) {
                if let first = given[option.id] {
                    let names = first.typed == name ? "'\(name)' given twice" : "'\(first.typed)' and '\(name)' both given"
                    throw usageError("\(names): '\(first.value)' and '\(value)'; give one")
                }
                given[option.id] = (name, value)
            }
            return .option(option, value: value, typed: name)
        }
    }

    /// The value of option `name`: inline, or the next argument.
    mutating func value(for name: String, inline: String?) throws -> String {
        if let inline { return inline }
        // `-n --db x`: a long option where a value belongs means the value was left out.
        guard index < arguments.count, !(arguments[index].hasPrefix("--") && arguments[index].count > 2) else {
            throw usageError("missing value for '\(name)'")
        }
        index += 1
        return arguments[index - 1]
    }

    /// An optional value from the next argument: taken when it holds a `%` (a strftime format)
    /// and is not an option, so that `--timestamp -o x.jpg` and `--timestamp '%H:%M'` both mean
    /// what they look like.
    mutating func optionalValue() -> String? {
        guard index < arguments.count, !optionsEnded, !arguments[index].hasPrefix("-"), arguments[index].contains("%") else { return nil }
        index += 1
        return arguments[index - 1]
    }

    /// The arguments up to `terminator` (`--exec CMD ARG… ;`), taken as they are, options or
    /// not; the terminator is consumed. An error when it never comes.
    mutating func values(until terminator: String, for name: String) throws -> [String] {
        var taken: [String] = []
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == terminator { return taken }
            taken.append(argument)
        }
        throw usageError("'\(name)' needs its command ended by a '\(terminator)' argument (quoted for the shell: \\; or ';')")
    }

    func usageError(_ message: String) -> CamrollError {
        CamrollError.usage(message, hint: "See 'camroll \(command) --help' for more information.")
    }
}

/// Parsers for option values; each error names the option and what it wanted.
enum ValueParser {
    /// `--preview-mode` (pick, show).
    static func previewMode(_ text: String, _ scanner: ArgumentScanner) throws -> PreviewMode {
        guard let mode = PreviewMode(rawValue: text.lowercased()) else {
            throw scanner.usageError("invalid value '\(text)' for '--preview-mode': expected "
                + PreviewMode.allCases.map(\.rawValue).joined(separator: ", "))
        }
        return mode
    }

    /// A file's path: anything but empty, which would otherwise resolve to the working directory.
    static func path(_ text: String, option: String) throws -> String {
        guard !text.isEmpty else { throw CamrollError.usage("invalid value '' for '\(option)': expected a path") }
        return text
    }

    static func integer(_ text: String, option: String, range: ClosedRange<Int>) throws -> Int {
        let digits = text.filter { $0 != "_" }
        let value = Int(digits)
        // A whole number too long for an Int is out of the range, not "not a whole number".
        guard value != nil || isWholeNumber(digits) else {
            throw CamrollError.usage("invalid value '\(text)' for '\(option)': expected a whole number")
        }
        guard let value, range.contains(value) else {
            throw CamrollError.usage(
                "invalid value '\(text)' for '\(option)': must be from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    /// Digits with a sign or none, of any length: what `Int(text)` takes, but for its range.
    static func isWholeNumber(_ text: String) -> Bool {
        let unsigned = text.first == "-" || text.first == "+" ? text.dropFirst() : Substring(text)
        return !unsigned.isEmpty && unsigned.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    /// `500ms`, `2s`, `1.5s`, `3m`, `1h`, `7d`, or a bare number of seconds → microseconds.
    static func duration(_ text: String, option: String) throws -> Int {
        let units: [(String, Double)] = [("us", 1), ("ms", 1e3), ("s", 1e6), ("m", 60e6), ("h", 3600e6), ("d", 86_400e6)]
        var number = Substring(text)
        var scale = 1e6
        for (suffix, factor) in units where text.hasSuffix(suffix) {
            let candidate = text.dropLast(suffix.count)
            if Double(candidate) != nil {
                number = candidate
                scale = factor
                break
            }
        }
        guard let value = Double(number), value.isFinite, value >= 0, value * scale < 1e15 else {
            throw CamrollError.usage(
                "invalid duration '\(text)' for '\(option)'", hint: "Examples: 500ms, 2s, 1.5m, 1h.")
        }
        return Int((value * scale).rounded())
    }

    /// `--until`: `HH:MM[:SS]` (its next coming, today or tomorrow) or `YYYY-MM-DD[THH:MM[:SS]]`,
    /// local time, or UTC with a trailing `Z` → wall clock, µs since the epoch.
    static func wallClock(_ text: String, option: String, now: Int = realtimeMicroseconds()) throws -> Int {
        let invalid = CamrollError.usage("invalid time '\(text)' for '\(option)'", hint: "Examples: 18:00, 18:30:15, 2030-01-31T18:00, 2030-01-31T17:00Z.")
        var body = Substring(text)
        let utc = body.hasSuffix("Z")
        if utc { body = body.dropLast() }
        let halves = body.split(separator: body.contains("T") ? "T" : " ", omittingEmptySubsequences: false)
        guard (1...2).contains(halves.count) else { throw invalid }
        func numbers(_ part: Substring, _ separator: Character, _ counts: ClosedRange<Int>) throws -> [Int] {
            let fields = part.split(separator: separator, omittingEmptySubsequences: false)
            guard counts.contains(fields.count), fields.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCII) }) else { throw invalid }
            return try fields.map { guard let n = Int($0), n >= 0 else { throw invalid }; return n }
        }
        var date: [Int]?
        var clock = [0, 0, 0]
        if halves.count == 2 || halves[0].contains("-") {
            date = try numbers(halves[0], "-", 3...3)
            if halves.count == 2 { clock = try numbers(halves[1], ":", 2...3) }
        } else {
            clock = try numbers(halves[0], ":", 2...3)
        }
        if clock.count == 2 { clock.append(0) }
        guard clock[0] < 24, clock[1] < 60, clock[2] < 61 else { throw invalid }
        var parts = tm()
        var seconds = time_t(now / 1_000_000)
        if utc { gmtime_r(&seconds, &parts) } else { localtime_r(&seconds, &parts) }
        if let date {
            guard date[1] >= 1, date[1] <= 12, date[2] >= 1, date[2] <= 31 else { throw invalid }
            parts.tm_year = Int32(date[0] - 1900)
            parts.tm_mon = Int32(date[1] - 1)
            parts.tm_mday = Int32(date[2])
        }
        parts.tm_hour = Int32(clock[0])
        parts.tm_min = Int32(clock[1])
        parts.tm_sec = Int32(clock[2])
        parts.tm_isdst = -1
        var result = Int(utc ? timegm(&parts) : mktime(&parts)) * 1_000_000
        // A time of day alone is its next coming.
        if date == nil && result <= now { result += 86_400_000_000 }
        return result
    }

    /// `800K`, `1M`, `1.5MB`, `2G`, or bytes. K/M/G are powers of 1024; kB/MB/GB of 1000.
    static func size(_ text: String, option: String) throws -> Int {
        let units: [(String, Double)] = [
            ("KiB", 1024), ("MiB", 1_048_576), ("GiB", 1_073_741_824), ("kB", 1e3), ("KB", 1e3), ("MB", 1e6), ("GB", 1e9),
            ("K", 1024), ("k", 1024), ("M", 1_048_576), ("G", 1_073_741_824), ("B", 1),
        ]
        var number = Substring(text)
        var scale = 1.0
        for (suffix, factor) in units where text.hasSuffix(suffix) {
            number = text.dropLast(suffix.count)
            scale = factor
            break
        }
        guard let value = Double(number), value.isFinite, value > 0, value * scale < 1e15 else {
            throw CamrollError.usage("invalid size '\(text)' for '\(option)'", hint: "Examples: 800K, 1M, 1.5MB.")
        }
        return Int((value * scale).rounded(.down))
    }
}

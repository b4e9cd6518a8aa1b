import FoundationEssentials
import Glibc

/// `--config FILE`: a camera profile, the options of `snap` one a line under the same names
/// (without their dashes), as `camroll@.service` reads `/etc/camroll/NAME.conf`:
///
///     # the bird feeder
///     device = /dev/v4l/by-id/usb-Logitech_C920_8A1B2C3D-video-index0
///     every = 1m
///     keep-for = 168h
///     output = /var/lib/camroll/feeder/%Y%m%d-%H%M%S.jpg
///     fsync
///     exec = /usr/local/bin/upload {path}
///
/// `name = value` or `name value`; a flag alone (`fsync`) or `= true`; `#` starts a comment
/// line. `exec`'s value is split into words on blanks (double or single quotes keep blanks in
/// one); no shell is involved. The file's options come before those of the command line, and
/// go through the same parser: the same errors. An unknown name is an error naming its line.
enum ServiceConfig {
    /// `arguments` with each `--config FILE` replaced by the file's options.
    static func expand(_ arguments: [String], command: CommandSpec) throws -> [String] {
        var result: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--" {
                result += arguments[(index - 1)...]
                break
            }
            var path: String?
            if argument == "--config" {
                guard index < arguments.count else {
                    throw CamrollError.usage("missing value for '--config'", hint: "See 'camroll snap --help' for more information.")
                }
                path = arguments[index]
                index += 1
            } else if argument.hasPrefix("--config=") {
                path = String(argument.dropFirst("--config=".count))
            }
            guard let path else {
                result.append(argument)
                continue
            }
            result = try options(inFile: path, command: command) + result
        }
        return result
    }

    static func options(inFile path: String, command: CommandSpec) throws -> [String] {
        guard !path.isEmpty else { throw CamrollError.usage("invalid value '' for '--config': expected a path") }
        guard let data = FileManager.default.contents(atPath: path) else {
            let reason = access(path, F_OK) == 0 ? SystemError("open").reason : "no such file"
            throw CamrollError(access(path, F_OK) == 0 ? .permissionDenied : .noInput, "cannot read the config file \(path): \(reason)")
        }
        return try options(in: String(decoding: data, as: UTF8.self), file: path, command: command)
    }

    static func options(in text: String, file: String, command: CommandSpec) throws -> [String] {
        var arguments: [String] = []
        for (number, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = String(rawLine).trimmed()
            if line.isEmpty || line.hasPrefix("#") { continue }
            func problem(_ message: String) -> CamrollError {
                CamrollError.usage("\(file), line \(number + 1): \(message)", hint: "The names are snap's options without their dashes; see 'camroll snap --help'.")
            }
            let name: String
            var value: String?
            if let split = line.firstIndex(where: { $0 == "=" || $0 == " " || $0 == "\t" }) {
                name = String(line[..<split]).trimmed()
                var rest = String(line[line.index(after: split)...]).trimmed()
                if line[split] != "=", rest.hasPrefix("=") { rest = String(rest.dropFirst()).trimmed() }
                value = rest
            } else {
                name = line
            }
            guard !name.isEmpty, !name.hasPrefix("-"), let option = command.option(named: "--" + name), !["--help", "--config"].contains(option.id) else {
                throw problem("unknown option '\(name)'")
            }
            if option.valueIsOptional {
                // `timestamp` alone, or `timestamp = %H:%M`.
                arguments.append(value.map { $0.isEmpty ? option.id : option.id + "=" + Self.unquoted($0) } ?? option.id)
            } else if option.takesValue {
                guard let value, !value.isEmpty else { throw problem("'\(name)' needs a value") }
                if option.id == "--exec" {
                    let words = try words(of: value) { problem($0) }
                    guard !words.isEmpty else { throw problem("'exec' needs a command") }
                    arguments += ["--exec"] + words + [";"]
                } else {
                    arguments += [option.id, Self.unquoted(value)]
                }
            } else {
                switch value?.lowercased() {
                case nil, "", "true", "yes", "on": arguments.append(option.id)
                case "false", "no", "off": continue
                default: throw problem("'\(name)' is a flag: give it alone, or '= true'")
                }
            }
        }
        return arguments
    }

    /// A value in matching quotes, without them.
    static func unquoted(_ value: String) -> String {
        if value.count >= 2, let first = value.first, first == "\"" || first == "'", value.last == first {
            return String(value.dropFirst().dropLast())
        }
        return value
    }

    /// Blank-separated words; quotes keep blanks (and each other) in a word.
    static func words(of text: String, problem: (String) -> CamrollError) throws -> [String] {
        var words: [String] = []
        var word = ""
        var inWord = false
        var quote: Character?
        for character in text {
            if let open = quote {
                if character == open { quote = nil } else { word.append(character) }
            } else if character == "\"" || character == "'" {
                quote = character
                inWord = true
            } else if character == " " || character == "\t" {
                if inWord { words.append(word) }
                word = ""
                inWord = false
            } else {
                word.append(character)
                inWord = true
            }
        }
        if quote != nil { throw problem("a quote is not closed") }
        if inWord { words.append(word) }
        return words
    }
}

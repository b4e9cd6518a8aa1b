/// The overlay options (CommandTable.overlay) into a `BannerRequest`.
extension BannerRequest {
    static let optionIDs: Set<String> = ["--timestamp", "--title", "--banner", "--font", "--font-size", "--banner-color", "--text-color"]
    /// Longest title or timestamp format taken: a banner is one line.
    static let longestText = 1000

    mutating func apply(_ id: String, value optional: String?, typed name: String, _ scanner: ArgumentScanner) throws {
        let value = optional ?? ""
        switch id {
        case "--timestamp":
            let format = optional ?? Self.defaultTimestampFormat
            guard !format.isEmpty else { throw scanner.usageError("'--timestamp=' needs a strftime format, e.g. --timestamp='%H:%M', or none at all") }
            try Self.checkOneLine(format, name, scanner)
            timestampFormat = format
        case "--title":
            guard !value.isEmpty else { throw scanner.usageError("'--title' needs a text, e.g. --title 'Front door'") }
            try Self.checkOneLine(value, name, scanner)
            title = value
        case "--banner":
            guard let edge = Edge(rawValue: value.lowercased()) else {
                throw scanner.usageError("invalid value '\(value)' for '--banner': expected top or bottom")
            }
            self.edge = edge
        case "--font":
            guard !value.trimmed().isEmpty else { throw scanner.usageError("'--font' needs a family, e.g. --font 'DejaVu Sans'") }
            font = value.trimmed()
        case "--font-size":
            fontSize = try ValueParser.integer(value, option: name, range: Self.fontSizes)
        case "--banner-color", "--text-color":
            guard let color = BannerColor(parsing: value) else {
                throw scanner.usageError(
                    "invalid colour '\(value)' for '\(name)': expected #RRGGBB, #RRGGBBAA or one of "
                        + BannerColor.names.keys.sorted().joined(separator: ", "))
            }
            if id == "--banner-color" { background = color } else { text = color }
        default:
            throw CamrollError(.failure, "internal error: \(id) is not a banner option")
        }
        self.given.insert(id)
    }

    private static func checkOneLine(_ text: String, _ name: String, _ scanner: ArgumentScanner) throws {
        guard isOneLine(text) else {
            throw scanner.usageError("'\(name)' holds a control character (a newline, a tab, an escape): the banner is one line of text")
        }
        guard text.utf8.count <= longestText else {
            throw scanner.usageError("'\(name)' is \(text.utf8.count) bytes long: at most \(longestText)")
        }
    }

    /// The looks without anything to draw are a mistake worth saying.
    func validate() throws {
        guard !isRequested, let option = given.sorted().first else { return }
        throw CamrollError.usage("'\(option)' styles the banner, and there is none: give --timestamp or --title too",
                                 hint: "e.g. camroll snap --timestamp --title 'Front door' \(option) …")
    }
}

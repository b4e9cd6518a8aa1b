import Glibc

/// Where a user's files go when no path is given: the home directory, the XDG pictures and data
/// directories, and `~/` in paths the user typed. An empty or relative `HOME` is no home: the
/// account database is asked, and if it has none either, the user is asked for a path.
enum UserDirectories {
    /// `$HOME` when it is an absolute path, else the account's home directory.
    static func home(environment: [String: String]) throws -> String {
        if let home = environment["HOME"], home.hasPrefix("/") { return home }
        if let entry = getpwuid(getuid()), let directory = entry.pointee.pw_dir {
            let home = String(cString: directory)
            if home.hasPrefix("/") && home != "/nonexistent" { return home }
        }
        throw CamrollError(
            .cannotCreate, "cannot tell where to save: HOME is not set and this account has no home directory",
            hint: "Give the paths: -o DIR/{seq}.jpg and --db DIR/catalog.sqlite3.")
    }

    /// `$XDG_PICTURES_DIR`, else XDG_PICTURES_DIR in `$XDG_CONFIG_HOME/user-dirs.dirs` (what
    /// xdg-user-dirs writes: `XDG_PICTURES_DIR="$HOME/Bilder"`), else `~/Pictures`.
    static func pictures(environment: [String: String]) throws -> String {
        if let pictures = environment["XDG_PICTURES_DIR"], pictures.hasPrefix("/") { return pictures }
        let home = try home(environment: environment)
        let config = environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? home + "/.config"
        if let text = RegularFile.contents(config + "/user-dirs.dirs", limit: 1 << 16),
           let pictures = userDirsEntry("XDG_PICTURES_DIR", in: String(decoding: text, as: UTF8.self), home: home) {
            return pictures
        }
        return home + "/Pictures"
    }

    /// Where downloaded pictures are kept: `$XDG_CACHE_HOME/camroll`, else `~/.cache/camroll`.
    static func cache(environment: [String: String]) throws -> String {
        let base = try environment["XDG_CACHE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? home(environment: environment) + "/.cache"
        return base + "/camroll"
    }

    /// The value of `name` in a user-dirs.dirs text: a quoted absolute path or `$HOME/…`.
    static func userDirsEntry(_ name: String, in text: String, home: String) -> String? {
        for line in text.split(separator: "\n") {
            let trimmed = line.drop(while: { $0 == " " || $0 == "\t" })
            guard trimmed.hasPrefix(name + "=") else { continue }
            var value = trimmed.dropFirst(name.count + 1)
            if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = value.dropFirst().dropLast() }
            if value == "$HOME" { return home }
            if value.hasPrefix("$HOME/") { return home + value.dropFirst(5) }
            if value.hasPrefix("/") { return String(value) }
        }
        return nil
    }

    /// `~` and `~/…` as a shell expands them (quoted, the shell did not). `~user/…` is refused:
    /// camroll does not guess at another account's directory.
    static func expandingTilde(_ path: String, environment: [String: String]) throws -> String {
        if path == "~" { return try home(environment: environment) }
        if path.hasPrefix("~/") { return try home(environment: environment) + path.dropFirst() }
        if path.hasPrefix("~") {
            throw CamrollError.usage("'\(path)': '~user' paths are not expanded", hint: "Write the directory out in full.")
        }
        return path
    }
}

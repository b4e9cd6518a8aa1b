/// A web address as camroll shows and keeps it: without the password of its user part
/// (`http://admin:secret@camera/snapshot.jpg` → `http://admin:***@camera/snapshot.jpg`), which an
/// IP camera's snapshot address often carries. The catalog (the run's device and command, the
/// sources table), the cache's file names, messages and the progress line all take this form;
/// only the request itself carries the password.
enum WebAddress {
    static let hiddenPassword = "***"

    /// `text` with the password of every `scheme://user:password@host` in it hidden; a whole
    /// argument such as `--device=http://…` too.
    static func withoutPassword(_ text: String) -> String {
        guard text.contains("@") else { return text }
        var result = ""
        var rest = Substring(text)
        while let separator = rest.firstRange(of: "://") {
            result += rest[..<separator.upperBound]
            rest = rest[separator.upperBound...]
            let authority = rest.prefix { !"/?#".contains($0) }
            guard let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") else { continue }
            result += authority[...colon] + hiddenPassword + authority[at...]
            rest = rest[authority.endIndex...]
        }
        return result + rest
    }
}

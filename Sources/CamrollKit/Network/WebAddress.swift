import Glibc

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

    /// Where the passwords of `scheme://user:password@host` addresses are in `bytes` (one
    /// argument as the kernel gave it), for `hidePasswords`.
    static func passwordRanges(in bytes: UnsafeBufferPointer<UInt8>) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        var index = 0
        while index + 3 <= bytes.count {
            guard bytes[index] == UInt8(ascii: ":"), bytes[index + 1] == UInt8(ascii: "/"), bytes[index + 2] == UInt8(ascii: "/") else {
                index += 1
                continue
            }
            let start = index + 3
            var end = start
            while end < bytes.count, ![UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: "#")].contains(bytes[end]) { end += 1 }
            if let at = (start..<end).last(where: { bytes[$0] == UInt8(ascii: "@") }),
               let colon = (start..<at).first(where: { bytes[$0] == UInt8(ascii: ":") }), colon + 1 < at {
                ranges.append((colon + 1)..<at)
            }
            index = end
        }
        return ranges
    }

    /// Overwrites, in the process's own argument strings, every password of a web address with
    /// '*' (as many as it had): what /proc/PID/cmdline shows, and so `ps` and anyone on the
    /// machine, from then on. (From exec to this moment, a few milliseconds, it could be read:
    /// ~/.netrc keeps it out of the arguments altogether.) True when there was one.
    static func hidePasswords(count: Int32, _ vector: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Bool {
        var hid = false
        for index in 1..<max(1, Int(count)) {
            guard let pointer = vector[index] else { break }
            let length = strlen(pointer)
            pointer.withMemoryRebound(to: UInt8.self, capacity: length) { bytes in
                for range in passwordRanges(in: UnsafeBufferPointer(start: bytes, count: length)) {
                    for offset in range { bytes[offset] = UInt8(ascii: "*") }
                    hid = true
                }
            }
        }
        return hid
    }
}

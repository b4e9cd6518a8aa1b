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

    /// Whether `url`'s authority has a user part (`user@host`, `user:password@host`).
    static func hasUser(_ url: String) -> Bool {
        guard let separator = url.firstRange(of: "://") else { return false }
        return url[separator.upperBound...].prefix { !"/?#".contains($0) }.contains("@")
    }

    /// The `user:password` that `--user-from` names: the first line of a file, or of the
    /// environment variable NAME for `env:NAME` (what a service's credentials store or a CI's
    /// secret gives). Never echoed: messages name the file or variable only.
    static func credentials(from source: String, environment: [String: String]) throws -> String {
        let text: String
        if source.hasPrefix("env:") {
            let name = String(source.dropFirst(4))
            guard let value = environment[name], !value.isEmpty else {
                throw CamrollError(.noInput, "--user-from \(source): the environment variable \(name) is not set")
            }
            text = value
        } else {
            let fd = open(source, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else {
                let error = SystemError("open", path: source)
                throw CamrollError(error.errno == ENOENT ? .noInput : error.accessExitCode, "cannot read --user-from \(source): \(error.reason)")
            }
            defer { close(fd) }
            var bytes = [UInt8](repeating: 0, count: 4096)
            let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard count >= 0 else {
                throw CamrollError(.ioError, "cannot read --user-from \(source): \(SystemError("read").reason)")
            }
            text = String(decoding: bytes[..<count], as: UTF8.self)
        }
        let line = String(text.prefix { $0 != "\n" && $0 != "\r" })
        guard let colon = line.firstIndex(of: ":"), colon != line.startIndex else {
            throw CamrollError(.dataError, "--user-from \(source) must hold USER:PASSWORD on its first line")
        }
        return line
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

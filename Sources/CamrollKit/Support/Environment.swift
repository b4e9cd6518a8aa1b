import Glibc

/// The process's environment and working directory, straight from libc: ProcessInfo and
/// FileManager set up far more than these two answers on first use (tens of milliseconds under
/// emulation, on the way to every photo).
public enum ProcessEnvironment {
    public static func variables() -> [String: String] {
        var result: [String: String] = [:]
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.firstIndex(of: "=") {
                result[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            entry += 1
        }
        return result
    }

    /// The working directory, or nil (errno says why) when it cannot be had: removed after the
    /// shell entered it (ENOENT), or above it a directory the user may not search (EACCES).
    static func currentDirectory() -> String? {
        guard let path = getcwd(nil, 0) else { return nil }
        defer { free(path) }
        return String(cString: path)
    }
}

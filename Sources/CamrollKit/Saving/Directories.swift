import Glibc

enum Directories {
    /// `mkdir -p`: creates `path` and its missing parents (mode 0755, less the umask).
    static func create(_ path: String) throws {
        var status = stat()
        if stat(path, &status) == 0 {
            guard (status.st_mode & S_IFMT) == S_IFDIR else { throw SystemError("mkdir", path: path, errno: ENOTDIR) }
            return
        }
        guard errno == ENOENT else { throw SystemError("mkdir", path: path) }
        let parent = path.split(separator: "/", omittingEmptySubsequences: true).dropLast().joined(separator: "/")
        if !parent.isEmpty { try create("/" + parent) }
        if mkdir(path, 0o755) != 0 && errno != EEXIST { throw SystemError("mkdir", path: path) }
    }

    /// Whether `path` is a directory (or a link to one).
    static func isDirectory(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR
    }
}

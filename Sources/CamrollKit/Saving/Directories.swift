import CLinux
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

    /// Where the file system that holds absolute `path` is mounted (for a path not made yet,
    /// the one its nearest existing parent is on): the highest directory above it on the same
    /// device. Nil when not even "/" can be looked at.
    static func mountPoint(holding path: String) -> String? {
        guard var (directory, status) = nearestExisting(path) else { return nil }
        let device = status.st_dev
        while directory != "/" {
            let parent = PathText.directory(of: directory)
            guard stat(parent, &status) == 0, status.st_dev == device else { break }
            directory = parent
        }
        return directory
    }

    /// Writes out everything the page cache holds for the file system that holds absolute
    /// `path` (syncfs). False where that could not be done.
    static func writeOutFileSystem(holding path: String) -> Bool {
        guard let (directory, _) = nearestExisting(PathText.directory(of: path)) else { return false }
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return syncfs(fd) == 0
    }

    /// The device of the file system that holds absolute `path` (for a path not made yet, the
    /// one its nearest existing parent is on).
    private static func device(holding path: String) -> dev_t? {
        nearestExisting(path)?.status.st_dev
    }

    /// Whether absolute `path` and `other` (or, for paths not made yet, their nearest existing
    /// parents) are on one file system.
    static func onOneFileSystem(_ path: String, _ other: String) -> Bool {
        guard let device = device(holding: path) else { return false }
        return device == self.device(holding: other)
    }

    /// Whether the file system that holds absolute `path` writes every change anew (btrfs):
    /// there even a write over a page a file already has takes room.
    static func copiesOnWrite(holding path: String) -> Bool {
        nearestExisting(path).map { clinux_copies_on_write($0.path) != 0 } ?? false
    }

    /// `path`, or its nearest parent that exists, and what stat says of it.
    private static func nearestExisting(_ path: String) -> (path: String, status: stat)? {
        var directory = path
        var status = stat()
        while stat(directory, &status) != 0 {
            guard directory != "/" else { return nil }
            directory = PathText.directory(of: directory)
        }
        return (directory, status)
    }
}

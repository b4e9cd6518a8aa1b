import Glibc

/// The directories a run saves into: its template's fixed directory (`OutputTemplate
/// .fixedDirectory`, the root), made and opened as the user named it at the run's first save
/// and held open from then on, and the directories below it (`{seq/1000}/`, `%Y/%m/`), each
/// opened and made relative to the one above it, a component at a time, with O_NOFOLLOW. A
/// directory of the tree swapped for a link mid-run, or a link planted where one is to be made,
/// is never followed: the save fails, exit 73. Nor is the root's path followed again once the
/// run holds it: each directory the run moves into is opened only once that path still leads
/// to the root it holds. (Without this, `mv out out.old; ln -s elsewhere out` during a run saving
/// into `out/{seq/1000}/` sent every later group's files `elsewhere`.) One tree for all of a
/// run's writers, so that `--jobs` writers hold the same root.
public final class OutputTree: Sendable {
    public let root: String
    private let held = Locked<Held?>(nil)

    private struct Held {
        let fd: Int32
        let identity: FileIdentity
    }

    public init(root: String) {
        self.root = root
    }

    deinit {
        held.withLock { if let fd = $0?.fd { close(fd) } }
    }

    /// Whether `directory` (absolute) is the root or below it.
    func holds(_ directory: String) -> Bool {
        directory == root || directory.hasPrefix(root == "/" ? "/" : root + "/")
    }

    /// A new descriptor of `directory` (absolute; the root or below it), made where missing,
    /// which the caller closes; and what it is.
    func open(_ directory: String) throws -> (fd: Int32, identity: FileIdentity) {
        let root = try heldRoot()
        var below: [Substring] = []
        if directory != root.path {
            below = directory.dropFirst(self.root == "/" ? 1 : self.root.count + 1).split(separator: "/")
        }
        var fd = fcntl(root.fd, F_DUPFD_CLOEXEC, 0)
        guard fd >= 0 else { throw CamrollError(.ioError, "cannot open directory \(self.root): \(SystemError("dup").reason)") }
        var reached = self.root
        for component in below {
            let name = String(component)
            reached += (reached == "/" ? "" : "/") + name
            guard name != "." && name != ".." else {
                close(fd)
                throw CamrollError(.cannotCreate, "cannot save under \(reached): '\(name)' in a path below the output directory")
            }
            var next = Self.openDirectory(fd, name)
            if next < 0 && errno == ENOENT {
                if mkdirat(fd, name, 0o755) != 0 && errno != EEXIST {
                    let error = SystemError("mkdir", path: reached)
                    close(fd)
                    throw error
                }
                next = Self.openDirectory(fd, name)
            }
            if next < 0 {
                let openErrno = errno
                var status = stat()
                let isLink = fstatat(fd, name, &status, AT_SYMLINK_NOFOLLOW) == 0 && (status.st_mode & S_IFMT) == S_IFLNK
                close(fd)
                if isLink {
                    throw CamrollError(
                        .cannotCreate, "cannot save under \(reached): it is a symbolic link, which camroll does not follow below the output directory \(self.root)",
                        hint: "A link in the tree a run saves into could send its photos anywhere. Remove the link, or name its target in -o.")
                }
                throw SystemError("open", path: reached, errno: openErrno)
            }
            close(fd)
            fd = next
        }
        var status = stat()
        guard fstat(fd, &status) == 0 else {
            let error = SystemError("fstat", path: directory)
            close(fd)
            throw error
        }
        return (fd, FileIdentity(status))
    }

    /// The root, made and opened at the first call; at every later one, checked to be what its
    /// path still leads to.
    private func heldRoot() throws -> (fd: Int32, path: String) {
        try held.withLock { held in
            if let held {
                var status = stat()
                guard stat(root, &status) == 0 else {
                    let error = SystemError("stat", path: root)
                    throw CamrollError(
                        .cannotCreate, "the output directory \(root) is gone (\(error.reason)): it was removed or moved during the run")
                }
                guard FileIdentity(status) == held.identity else {
                    throw CamrollError(
                        .cannotCreate, "the output directory \(root) was replaced during the run (moved, or swapped for a link): nothing more is saved into what is there now",
                        hint: "The files saved so far are where the run put them; 'camroll verify --repair' marks those no longer at their paths.")
                }
                return (held.fd, root)
            }
            try Directories.create(root)
            let fd = Glibc.open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard fd >= 0 else { throw SystemError("open", path: root) }
            var status = stat()
            guard fstat(fd, &status) == 0 else {
                let error = SystemError("fstat", path: root)
                close(fd)
                throw error
            }
            held = Held(fd: fd, identity: FileIdentity(status))
            return (fd, root)
        }
    }

    private static func openDirectory(_ parent: Int32, _ name: String) -> Int32 {
        retryingOnInterrupt { openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
    }
}

/// The directories `delete` unlinks files in: a file is read and unlinked relative to its
/// directory's descriptor, and only in the directory its save went into — the one whose device
/// and inode its row recorded, or, for a row that has none (saved by an earlier camroll, or
/// recorded by `verify --repair`), one reached from "/" without following a symbolic link. A
/// directory moved away and replaced by a link to another (`mv d d.real; ln -s victim d`) is
/// then not the run's, and nothing in it is touched, with `--force` or without. The last
/// directory is kept open: a run's files follow one another, directory by directory.
final class SaveDirectories {
    enum Opened {
        case directory(Int32)
        /// Neither the directory nor, so, the file is there.
        case missing
        /// Not the directory the file was saved into: why.
        case elsewhere(String)
        case failed(SystemError)
    }

    private var last: (path: String, recorded: FileIdentity?, opened: Opened)?

    deinit { close() }

    private func close() {
        if case .directory(let fd)? = last?.opened { Glibc.close(fd) }
        last = nil
    }

    /// The directory `path` of a save whose row recorded `recorded`.
    func open(_ path: String, recorded: FileIdentity?) -> Opened {
        if let last, last.path == path, last.recorded == recorded { return last.opened }
        close()
        let opened = recorded.map { openRecorded(path, $0) } ?? openWithoutLinks(path)
        last = (path, recorded, opened)
        return opened
    }

    private func openRecorded(_ path: String, _ recorded: FileIdentity) -> Opened {
        let fd = retryingOnInterrupt { Glibc.open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        guard fd >= 0 else {
            return errno == ENOENT || errno == ENOTDIR ? .missing : .failed(SystemError("open", path: path))
        }
        var status = stat()
        guard fstat(fd, &status) == 0 else {
            let error = SystemError("fstat", path: path)
            Glibc.close(fd)
            return .failed(error)
        }
        guard FileIdentity(status) == recorded else {
            Glibc.close(fd)
            var link = stat()
            let how = lstat(path, &link) == 0 && (link.st_mode & S_IFMT) == S_IFLNK
                ? "it is a symbolic link to another directory" : "it is another directory (moved or replaced since)"
            return .elsewhere("\(path) is not the directory its run saved into: \(how)")
        }
        return .directory(fd)
    }

    private func openWithoutLinks(_ path: String) -> Opened {
        var fd = retryingOnInterrupt { Glibc.open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        guard fd >= 0 else { return .failed(SystemError("open", path: "/")) }
        var reached = ""
        for component in path.split(separator: "/") {
            let name = String(component)
            reached += "/" + name
            let next = retryingOnInterrupt { openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
            if next < 0 {
                let openErrno = errno
                var status = stat()
                let isLink = fstatat(fd, name, &status, AT_SYMLINK_NOFOLLOW) == 0 && (status.st_mode & S_IFMT) == S_IFLNK
                Glibc.close(fd)
                if isLink {
                    return .elsewhere("\(reached) is a symbolic link, and the catalog has no record of the directory the file was saved into")
                }
                return openErrno == ENOENT || openErrno == ENOTDIR ? .missing : .failed(SystemError("open", path: reached, errno: openErrno))
            }
            Glibc.close(fd)
            fd = next
        }
        return .directory(fd)
    }
}

import CLinux
import Glibc
import Synchronization

/// Writes files so that a final name only ever holds a complete file, and without
/// `--overwrite` never replaces one, with no check-then-write race. Two ways:
///
/// - Where the file system makes files without names (O_TMPFILE: ext4, XFS, btrfs, tmpfs), the
///   bytes go to such a file, which `linkat` then names; linkat refuses an existing name. Nothing
///   is left behind by SIGKILL or a crash (the kernel frees a file no name holds), and there is
///   no name for anyone to guess or plant a link at. It is also the cheaper way: one directory
///   entry made instead of one made, one moved and one removed — small files on a loop-mounted
///   ext4 went from 21 700 to 28 300 a second with one writer, 29 000 to 55 000 with two
///   (`Benchmarks/atomic_cost.c`, `rename` against `unnamed`).
/// - Elsewhere (FAT, exFAT, FUSE, NFS), and for `--overwrite`, the bytes go to a temporary name
///   in the target directory, which is then renamed into place: with `RENAME_NOREPLACE` where
///   the file system offers it; else link + unlink, and where it has no hard links either (exFAT
///   or NTFS through FUSE) a lookup, then the rename. The temporary file is created relative to
///   the directory's descriptor with O_CREAT|O_EXCL|O_NOFOLLOW under a name with 48 random bits
///   in it: whoever else can write the directory can neither guess the name nor plant a
///   symbolic link there that the write would follow (camroll may run as root in a directory a
///   user can write). `verify --repair` removes such files that a killed run left, which the
///   naming makes unambiguous.
public final class AtomicFileWriter {
    /// What to do when the final name is taken.
    public enum ExistingFile: Sendable {
        /// Stop with "already exists" (exit 73): an explicit `-o` said exactly where.
        case refuse
        /// `--overwrite`.
        case replace
        /// The default naming, as a phone's camera does: keep the old file and save as
        /// `NAME-2.jpg`, `NAME-3.jpg`, … (two shots in one second share `{date}_{time}`).
        case keepAndNumber
    }

    public let existing: ExistingFile
    public let sync: Bool
    /// `--direct`: the bytes go to the device with O_DIRECT, past the page cache, so that a
    /// save's time is the device's. Where the file system refuses it, the writer falls back to
    /// the page cache and says so once through `directRefused`.
    public let direct: Bool
    public var directRefused: (@Sendable (String) -> Void)?
    /// Whether the prepared directory's file system takes O_DIRECT (nil: not tried yet).
    private var directWorks: Bool?
    /// Where a file's pieces are gathered into one aligned run of bytes for O_DIRECT (`gathered`).
    private var alignedBuffer: UnsafeMutableRawBufferPointer?
    /// Which bytes the aligned buffer still holds from the last file: the last piece of the
    /// write whose `lastPieceID` was `id`, at `offset`. Copies of one photo differ at most in a
    /// stamp before it, so the photo itself is copied there once and not at every save (copying
    /// 2.3 MB was a fifth of a one-job `--direct` run's time).
    private var staged: (id: Int, offset: Int, count: Int)?
    static let directAlignment = 4096
    public var overwrite: Bool { existing == .replace }
    /// Files never replaced, not even with `--overwrite`: the catalog and the files beside it
    /// (`-o` naming the catalog, by mistake or through another name for it, would put a JPEG
    /// where every record was). By device and inode, so any name for them is caught.
    public var protectedFiles: [FileIdentity: String] = [:]
    /// Lets a second signal stop the writer between any two steps (see `WriteGate`).
    public let gate = WriteGate()
    private var preparedDirectory: String?
    private var directoryFD: Int32 = -1
    /// Where a run's directories are opened and made (`OutputTree`); nil: by their paths (a
    /// cached download, a plot).
    public var tree: OutputTree?
    /// The device and inode of the directory the last file was saved into, recorded with its
    /// row, so that `delete` unlinks it there and nowhere else.
    public private(set) var directoryIdentity: FileIdentity?

    /// `.camroll-PID-`, between the final name and the random part of a temporary name.
    private static let temporaryInfix = Array(".camroll-\(getpid())-".utf8)
    /// The kernel's random bytes (getrandom), fetched 4 KiB at a time: Swift's generator, and
    /// glibc 2.36's arc4random, make a system call for each name, one per save.
    private static let randomBits = Locked(RandomBits())

    struct RandomBits: ~Copyable {
        private var pool = [UInt8](repeating: 0, count: 4096)
        private var used = 4096

        /// 48 bits (12 hex digits) no one else can predict.
        mutating func next48() -> UInt64 {
            if used + 6 > pool.count {
                let filled = pool.withUnsafeMutableBytes { clinux_getrandom($0.baseAddress, $0.count) }
                if filled != pool.count {
                    // No getrandom (or interrupted): the standard generator, one name at a time.
                    return UInt64.random(in: 0..<(1 << 48))
                }
                used = 0
            }
            defer { used += 6 }
            return pool[used..<(used + 6)].reduce(0) { $0 << 8 | UInt64($1) }
        }
    }
    /// What a temporary name adds to the final one: `.` in front, `.camroll-PID-RANDOM.tmp` after.
    private static let temporarySuffixBytes = 1 + ".camroll-\(Int32.max)-".utf8.count + 12 + ".tmp".utf8.count

    /// `.NAME.camroll-PID-RANDOM.tmp`: hidden, saying which process left it, unpredictable, and
    /// within NAME_MAX (255 bytes) whatever the final name's length (its end is cut off).
    /// Laid out in one allocation, the name and the infix copied whole: it runs once per save.
    public static func temporaryName(for name: Substring) -> String {
        let room = Int(NAME_MAX) - temporarySuffixBytes
        var kept = name
        while kept.utf8.count > room { kept = kept.dropLast() }
        let random = randomBits.withLock { $0.next48() }
        let infix = temporaryInfix
        let length = 1 + kept.utf8.count + infix.count + 12 + 4
        return String(unsafeUninitializedCapacity: length) { bytes in
            let start = UnsafeMutableRawPointer(bytes.baseAddress!)
            bytes[0] = UInt8(ascii: ".")
            var end = 1
            func copy(_ source: UnsafeBufferPointer<UInt8>) {
                if let from = source.baseAddress { (start + end).copyMemory(from: from, byteCount: source.count) }
                end += source.count
            }
            kept.withUTF8(copy)
            infix.withUnsafeBufferPointer(copy)
            for shift in stride(from: 44, through: 0, by: -4) {
                let digit = UInt8(truncatingIfNeeded: random >> UInt64(shift)) & 0xf
                bytes[end] = digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") - 10 + digit
                end += 1
            }
            for byte in [UInt8(ascii: "."), UInt8(ascii: "t"), UInt8(ascii: "m"), UInt8(ascii: "p")] {
                bytes[end] = byte
                end += 1
            }
            return end
        }
    }

    /// Matches the temporary files process `pid` writes (for `verify --repair`), also the
    /// `.NAME.camroll-PID.tmp` names of earlier versions.
    public static func temporaryNamePattern(pid: Int32) -> String {
        "^\\..+\\.camroll-\(pid)(-[0-9a-f]{12})?\\.tmp$"
    }

    public init(existing: ExistingFile, sync: Bool, direct: Bool = false) {
        self.existing = existing
        self.sync = sync
        self.direct = direct
    }

    public convenience init(overwrite: Bool, sync: Bool) {
        self.init(existing: overwrite ? .replace : .refuse, sync: sync)
    }

    deinit {
        if directoryFD >= 0 { close(directoryFD) }
        alignedBuffer?.deallocate()
    }

    /// Writes `pieces`, one after another, as the file at absolute `path`; returns the path it
    /// was saved under (`path`, or a numbered one with `.keepAndNumber`). `whenNamed` runs right
    /// after the rename, inside the gate: a second signal sees the file and whatever `whenNamed`
    /// recorded of it together, or neither. It is told whether the file and its directory are
    /// synced: with `sync`, false when the directory's fsync failed (the file is in place all
    /// the same, and `write` then throws `NamedButNotSynced`). `lastPieceID` names the bytes of
    /// the last piece: a later write with the same ID promises the same bytes there.
    /// `beforeNaming` runs once the bytes are written (and synced), before the file takes its
    /// name: what must be done before the file may be seen under it, done meanwhile elsewhere,
    /// is waited for there. If it throws, the file is not named, and nothing of it is left.
    @discardableResult
    public func write(
        _ pieces: [UnsafeRawBufferPointer], to path: String, lastPieceID: Int? = nil,
        beforeNaming: () throws -> Void = {},
        whenNamed: (_ saved: String, _ synced: Bool) throws -> Void = { _, _ in }
    ) throws -> String {
        // Split at the last "/" among the bytes ("/" is never part of a longer UTF-8 sequence):
        // searching the characters costs more than the rest of the bookkeeping of a save, and
        // the UTF-8 view index by index ~330 instructions a save, the bytes in place a few.
        let slash: String.Index
        if let offset = path.utf8.withContiguousStorageIfAvailable({ $0.lastIndex(of: UInt8(ascii: "/")) }) {
            slash = offset.map { path.utf8.index(path.utf8.startIndex, offsetBy: $0) } ?? path.startIndex
        } else {
            slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) ?? path.startIndex
        }
        // The directory of the last save, as a rule: its string again, not a new one.
        let directory: String
        if slash == path.startIndex {
            directory = "/"
        } else if let prepared = preparedDirectory, Self.bytes(of: path, before: slash, equal: prepared) {
            directory = prepared
        } else {
            directory = String(path[..<slash])
        }
        let name = path[path.utf8.index(after: slash)...]
        try prepare(directory: directory, saving: path)
        let directoryFD = self.directoryFD

        if existing != .replace, unnamedFiles != false, Self.procFileDescriptorsWork {
            let (fd, openErrno) = try gate.createUnnamed(directoryFD: directoryFD)
            if fd >= 0 {
                unnamedFiles = true
                return try writeUnnamed(fd: fd, pieces, path: path, directory: directory, name: name, lastPieceID: lastPieceID,
                                        beforeNaming: beforeNaming, whenNamed: whenNamed)
            }
            if openErrno == ENOSPC || openErrno == EDQUOT {
                // XFS refuses a file without a name for want of space long before the disk is
                // full while it still makes named ones (seen: a fill ended "full" at 0.30-0.51 of
                // the space; the space it holds for data not yet written out is, it seems, freed
                // for a named file and not for the other). Near the end, temporary names then.
                unnamedFiles = false
                Trace.mark("O_TMPFILE out of space: names")
            } else {
                guard unnamedFiles == nil, [EOPNOTSUPP, EISDIR, EINVAL].contains(openErrno) else {
                    throw Self.creationError(openErrno, path: path, directory: directory, directoryFD: directoryFD, name: name, bytes: pieces)
                }
                unnamedFiles = false
                Trace.mark("no O_TMPFILE: temporary names")  // which way, for CAMROLL_TRACE=1
            }
        }

        var temporary = Self.temporaryName(for: name)
        var (fd, openErrno) = try gate.create(directoryFD: directoryFD, name: temporary)
        for _ in 0..<2 where fd < 0 && openErrno == EEXIST {
            temporary = Self.temporaryName(for: name)  // someone else's file: never opened, never followed
            (fd, openErrno) = try gate.create(directoryFD: directoryFD, name: temporary)
        }
        if fd < 0 {
            throw Self.creationError(openErrno, path: path, directory: directory, directoryFD: directoryFD, name: name, bytes: pieces)
        }
        var named = false, closed = false
        defer {
            if !closed { close(fd) }
            if !named { unlinkat(directoryFD, temporary, 0) }
            gate.clear()
        }
        try writeContents(fd: fd, pieces, path: path, directory: directory, lastPieceID: lastPieceID)
        if !sync {
            closed = true
            // Network file systems may report a failed write only here.
            if close(fd) != 0 { throw Self.userError(SystemError("close", path: path), path: path) }
        }
        try beforeNaming()
        return try gate.commit {
            let saved = try place(path: path, directory: directory, name: name, temporary: temporary) { rename(temporary, to: $0) }
            named = true
            guard sync else { return try finish(saved: saved, whenNamed: whenNamed) }
            // Synced again under its name: FAT keeps a file's size and first cluster in its
            // directory entry, and a rename makes a new entry that gets them only when the file
            // itself is next written out. Synced before the rename alone, every file of a
            // --fsync run on a FAT32 card came back empty after a power cut (the VM's power-cut).
            var fileFailure: CamrollError?
            if fsync(fd) != 0 {
                let error = SystemError("fsync", path: saved)
                let said = Self.userError(error, path: saved)
                fileFailure = CamrollError(said.exitCode, "\(saved) is in place, but could not be synced: \(error.call): \(error.reason)",
                                           hint: said.hint, systemErrno: said.systemErrno)
            }
            closed = true
            close(fd)
            return try finish(saved: saved, whenNamed: whenNamed, failure: fileFailure)
        }
    }

    /// Whether `path`'s bytes before `end` are `text`'s.
    private static func bytes(of path: String, before end: String.Index, equal text: String) -> Bool {
        let length = path.utf8.distance(from: path.utf8.startIndex, to: end)
        guard length == text.utf8.count else { return false }
        let equal = path.utf8.withContiguousStorageIfAvailable { path in
            text.utf8.withContiguousStorageIfAvailable { text in memcmp(path.baseAddress!, text.baseAddress!, length) == 0 }
        }
        return (equal ?? nil) ?? path.utf8[..<end].elementsEqual(text.utf8)
    }

    /// `write` through a file without a name (`fd`, open in the prepared directory), which is
    /// linked under its final name once its bytes are in it.
    private func writeUnnamed(
        fd: Int32, _ pieces: [UnsafeRawBufferPointer], path: String, directory: String, name: Substring, lastPieceID: Int?,
        beforeNaming: () throws -> Void, whenNamed: (_ saved: String, _ synced: Bool) throws -> Void
    ) throws -> String {
        // No temporary name for the gate to remove: nothing to clear after it.
        var closed = false
        defer { if !closed { close(fd) } }
        try writeContents(fd: fd, pieces, path: path, directory: directory, lastPieceID: lastPieceID)
        try beforeNaming()
        return try gate.commit {
            let saved = try place(path: path, directory: directory, name: name, temporary: nil) { link(unnamed: fd, as: $0) }
            closed = true
            // A file system that reports a failed write only at close (FUSE's flush) would have
            // put an incomplete file under the name: it goes again.
            if close(fd) != 0 {
                let error = Self.userError(SystemError("close", path: saved), path: saved)
                unlink(saved)
                throw error
            }
            return try finish(saved: saved, whenNamed: whenNamed)
        }
    }

    /// The bytes of a save into `fd`, synced with `sync`.
    private func writeContents(
        fd: Int32, _ pieces: [UnsafeRawBufferPointer], path: String, directory: String, lastPieceID: Int?
    ) throws {
        if direct && directWorks != false {
            try writeDirect(fd: fd, bytes: gathered(pieces, lastPieceID: lastPieceID), path: path, directory: directory)
        } else {
            try Self.writeAll(fd: fd, pieces: pieces, path: path)
        }
        if sync, fsync(fd) != 0 { throw Self.userError(SystemError("fsync", path: path), path: path) }
    }

    /// After the file took its final name `saved`: the directory synced (with `sync`), then
    /// `whenNamed`. The file is recorded even if the directory's fsync fails (or `failure`, the
    /// file's own after naming, came before), and the run then ends with that error.
    private func finish(
        saved: String, whenNamed: (_ saved: String, _ synced: Bool) throws -> Void, failure: CamrollError? = nil
    ) throws -> String {
        var syncFailure = failure
        if syncFailure == nil {
            do { try syncDirectory(path: saved) } catch let error as CamrollError { syncFailure = error }
        }
        try whenNamed(saved, sync && syncFailure == nil)
        if let syncFailure { throw NamedButNotSynced(path: saved, error: syncFailure) }
        return saved
    }

    /// Why a file could not be made in `directory` (`openErrno`), in the user's words.
    private static func creationError(
        _ openErrno: Int32, path: String, directory: String, directoryFD: Int32, name: Substring, bytes pieces: [UnsafeRawBufferPointer]
    ) -> CamrollError {
        // In a directory removed meanwhile ext4 says EPERM to O_TMPFILE, ENOENT to a name.
        if let error = directoryRemoved(path: path, directory: directory, directoryFD: directoryFD) { return error }
        // FAT and exFAT refuse these in names (through FUSE with ENOENT, in the kernel EINVAL):
        // say so rather than "no such file" in a directory that is there.
        if openErrno == EINVAL || openErrno == ENOENT, let refused = name.first(where: { "\\:*?\"<>|".contains($0) }) {
            return CamrollError(
                .cannotCreate, "cannot save \(path): the file system refuses '\(refused)' in a name",
                hint: "FAT and exFAT (most SD cards and USB sticks) refuse \\ : * ? \" < > | in names; change -o.")
        }
        if openErrno == ENOSPC, let error = noRoomForName(path: path, directory: directory, directoryFD: directoryFD, bytes: pieces) {
            return error
        }
        // The temporary name (or the file without one) is ours, not the user's: the message names the directory.
        return userError(SystemError("cannot create a file in \(directory)", errno: openErrno), path: path)
    }

    /// Gives the finished file `name` (the last part of `path`) by `attempt`, or with
    /// `.keepAndNumber` the first free `name-2`, `name-3`, …; returns the path it took.
    /// `attempt` renames `temporary` or links the file without a name (`temporary` nil) into the
    /// prepared directory: 0, or its errno.
    private func place(
        path: String, directory: String, name: Substring, temporary: String?, by attempt: (String) -> Int32
    ) throws -> String {
        var target = String(name)
        var targetPath = path
        var number = 1
        if overwrite {
            var status = stat()
            if fstatat(directoryFD, target, &status, AT_SYMLINK_NOFOLLOW) == 0 {
                if let what = protectedFiles[FileIdentity(status)] {
                    throw CamrollError(.cannotCreate, "cannot save \(targetPath): it is \(what)",
                                       hint: "Choose another -o, or another catalog with --db.")
                }
                try Self.refuseSpecialFile(status, path: targetPath)
            }
        }
        while true {
            let code = attempt(target)
            if code == 0 { return targetPath }
            guard code == EEXIST, existing == .keepAndNumber, number < 1000 else {
                if code == EEXIST || code == EISDIR, Directories.isDirectory(targetPath) {
                    // Not "already exists, use --overwrite": --overwrite cannot replace a directory.
                    throw CamrollError(.cannotCreate, "cannot save \(targetPath): a directory has that name")
                }
                var status = stat()
                if code == EEXIST, fstatat(directoryFD, target, &status, AT_SYMLINK_NOFOLLOW) == 0 {
                    try Self.refuseSpecialFile(status, path: targetPath)
                }
                // vfat writes the new name's entries before it drops the old ones.
                if code == ENOSPC, let error = Self.noRoomForName(path: targetPath, directory: directory, directoryFD: directoryFD, bytes: []) {
                    throw error
                }
                if let error = Self.directoryRemoved(path: targetPath, directory: directory, directoryFD: directoryFD) { throw error }
                if code == ENOENT, let temporary {
                    // FAT cannot tell a directory it cannot read from a name that is not in it:
                    // on a card pulled out or failing, the rename finds no temporary file too
                    // (seen in the VM). The directory, which holds that file's new entry, cannot
                    // be synced then.
                    if fsync(directoryFD) != 0, errno == EIO {
                        throw Self.userError(SystemError("fsync of its directory \(directory)", errno: EIO), path: targetPath)
                    }
                    throw CamrollError(.cannotCreate, "cannot save \(targetPath): the file being written (\(temporary)) was removed "
                                       + "by something else before it took its name")
                }
                throw Self.userError(SystemError(overwrite || unnamedFiles != true ? "rename" : "link", path: targetPath, errno: code),
                                     path: targetPath)
            }
            number += 1
            target = Self.numbered(String(name), number)
            targetPath = directory == "/" ? "/" + target : directory + "/" + target
        }
    }

    /// A device, FIFO or socket under the name a photo is to take is not a file to replace:
    /// `-o /dev/null --overwrite`, run as root, would put a JPEG where the device was, for every
    /// program after. (A directory is refused by rename itself, a symbolic link replaced as `mv`
    /// replaces one.)
    private static func refuseSpecialFile(_ status: stat, path: String) throws {
        let kind: String
        switch status.st_mode & S_IFMT {
        case S_IFCHR: kind = "a character device"
        case S_IFBLK: kind = "a block device"
        case S_IFIFO: kind = "a FIFO"
        case S_IFSOCK: kind = "a socket"
        default: return
        }
        throw CamrollError(.cannotCreate, "cannot save \(path): it is \(kind), and photos replace only files",
                           hint: "'-o -' writes the photo to standard output, which may go anywhere (e.g. > /dev/null).")
    }

    /// The open directory a file could not be made or named in was removed while the run saved
    /// into it (`rm -r` of the output, a folder deleted from a share). nil when it is there.
    private static func directoryRemoved(path: String, directory: String, directoryFD: Int32) -> CamrollError? {
        var status = stat()
        guard fstat(directoryFD, &status) == 0, status.st_nlink == 0 else { return nil }
        return CamrollError(.cannotCreate, "cannot save \(path): its directory \(directory) was removed while the run saved into it")
    }

    /// ENOSPC while a name is made need not mean that the space is gone: a file system can have
    /// no inode left (ext4 and tmpfs fix their number when made) or a directory no free entry
    /// (FAT16's root holds 512, any FAT directory 65 536, a long name taking several) with space
    /// still free. Then that is said, as "cannot create" (73), which does not end a fill as a
    /// full file system does: a fill that stopped there would claim a capacity it never reached.
    /// nil when the space is what ran out. `directoryFD`: `directory`, open.
    private static func noRoomForName(
        path: String, directory: String, directoryFD: Int32, bytes pieces: [UnsafeRawBufferPointer]
    ) -> CamrollError? {
        var info = statvfs()
        guard fstatvfs(directoryFD, &info) == 0 else { return nil }
        let block = Int(clamping: info.f_frsize)
        let free = info.availableBytes, size = info.totalBytes
        guard free >= pieces.reduce(2 * block, { $0 + $1.count }) else { return nil }
        let left = Units.bytes(free)
        if info.f_files > 0 && info.f_favail == 0 {
            return CamrollError(
                .cannotCreate,
                "cannot save \(path): the file system has no inode left for another file, though \(left) is free",
                hint: "Its number of files was fixed when it was made (mkfs.ext4 -N, tmpfs nr_inodes=); fewer, larger photos (-r) use the space.")
        }
        // Near their end XFS and btrfs refuse a new file with some space left, kept for their own
        // records: under 1% free is full.
        guard free >= size / 100 else { return nil }
        if clinux_is_fat(directoryFD) != 0 {
            return CamrollError(
                .cannotCreate, "cannot save \(path): \(directory) takes no more names, though \(left) is free",
                hint: "A FAT16 root directory holds 512 names and any FAT directory 65536, fewer when they are long: "
                    + "give every 1000 photos a directory (-o '\(directory == "/" ? "" : directory)/{seq/1000}/{seq}.jpg').")
        }
        return CamrollError(
            .cannotCreate, "cannot save \(path): the file system takes no more files in \(directory), though \(left) is free",
            hint: "It ran out of room for names or its own records, not of space; "
                + "a directory for every 1000 photos (-o '\(directory == "/" ? "" : directory)/{seq/1000}/{seq}.jpg') or fewer, larger photos may fit.")
    }

    /// `/d/a_1.jpg`, 2 → `/d/a_1-2.jpg`.
    static func numbered(_ path: String, _ number: Int) -> String {
        let nameStart = path.lastIndex(of: "/").map(path.index(after:)) ?? path.startIndex
        guard let dot = path[nameStart...].lastIndex(of: "."), dot > nameStart else { return path + "-\(number)" }
        return String(path[..<dot]) + "-\(number)" + String(path[dot...])
    }

    /// How the prepared directory's file system renames without replacing, once found out.
    private enum NoReplace {
        case unknown
        /// renameat2(RENAME_NOREPLACE): atomic, what Linux's own file systems offer.
        case renameFlag
        /// link() then unlink(): link refuses an existing name too (NFS, and FUSE file systems
        /// with hard links, e.g. sshfs).
        case link
        /// Neither (exFAT or NTFS through FUSE): the name is looked up, then renamed over. Another
        /// process creating that name between the two would lose its file, as with `mv -n` there.
        case checkThenRename
    }
    private var noReplace = NoReplace.unknown

    /// Whether the prepared directory's file system makes files without names (nil: not tried yet).
    private var unnamedFiles: Bool?
    /// Whether this process names them through /proc/self/fd (nil: not found out yet); see
    /// `clinux_link_unnamed`.
    private var linksThroughProc: Bool?
    /// Without /proc (a bare chroot or container) a file without a name can be named only by a
    /// process with CAP_DAC_READ_SEARCH, which is not known before trying: temporary names then.
    private static let procFileDescriptorsWork = access("/proc/self/fd", X_OK) == 0

    /// 0, or the errno of the failed link of the unnamed file `fd` as `name` in the prepared directory.
    private func link(unnamed fd: Int32, as name: String) -> Int32 {
        name.withCString { name in
            if linksThroughProc != true {
                if clinux_link_unnamed(fd, directoryFD, name, 0) == 0 {
                    linksThroughProc = false
                    return 0
                }
                // ENOENT: not allowed to link by the descriptor (or the directory is gone).
                guard errno == ENOENT, linksThroughProc == nil else { return errno }
            }
            guard clinux_link_unnamed(fd, directoryFD, name, 1) == 0 else { return errno }
            if linksThroughProc == nil { Trace.mark("unnamed files: link via /proc") }
            linksThroughProc = true
            return 0
        }
    }

    /// 0, or the errno of the failed rename. Both names are in the prepared directory.
    /// (The names are lent to the system calls with withCString: a String passed as a C string
    /// argument is first copied into a new array.)
    private func rename(_ temporary: String, to name: String) -> Int32 {
        temporary.withCString { temporary in
            name.withCString { name in
                if overwrite { return renameat(directoryFD, temporary, directoryFD, name) == 0 ? 0 : errno }
                if noReplace == .unknown || noReplace == .renameFlag {
                    if clinux_renameat2_noreplace(directoryFD, temporary, directoryFD, name) == 0 {
                        noReplace = .renameFlag
                        return 0
                    }
                    guard errno == EINVAL, noReplace == .unknown else { return errno }
                    noReplace = .link
                    Trace.mark("no RENAME_NOREPLACE: link")  // which way, for CAMROLL_TRACE=1
                }
                if noReplace == .link {
                    if linkat(directoryFD, temporary, directoryFD, name, 0) == 0 {
                        unlinkat(directoryFD, temporary, 0)
                        return 0
                    }
                    // No hard links here: EPERM (FAT, exFAT), EOPNOTSUPP, ENOSYS, EMLINK.
                    guard [EPERM, EOPNOTSUPP, ENOSYS, EMLINK].contains(errno) else { return errno }
                    noReplace = .checkThenRename
                    Trace.mark("no hard links: look up")
                }
                var status = stat()
                if fstatat(directoryFD, name, &status, AT_SYMLINK_NOFOLLOW) == 0 { return EEXIST }
                guard errno == ENOENT else { return errno }
                return renameat(directoryFD, temporary, directoryFD, name) == 0 ? 0 : errno
            }
        }
    }

    /// Writes `pieces` one after another with as few system calls as the kernel allows: one
    /// write, or for several pieces one writev, then more for whatever a short write left. (A
    /// save has at most three pieces, far below writev's limit of 1024.)
    private static func writeAll(fd: Int32, pieces: [UnsafeRawBufferPointer], path: String) throws {
        if pieces.count == 1 {
            // One piece (every copy but a stamped one): write(2), without the array of vectors.
            let failure = writeFully(fd, pieces[0])
            if failure != 0 { throw Self.userError(SystemError("write", path: path, errno: failure), path: path) }
            return
        }
        var unwritten = ArraySlice(pieces.lazy.filter { $0.count > 0 }.map {
            iovec(iov_base: UnsafeMutableRawPointer(mutating: $0.baseAddress), iov_len: $0.count)
        })
        while !unwritten.isEmpty {
            let written = unwritten.withUnsafeBufferPointer { rest in
                retryingOnInterrupt { writev(fd, rest.baseAddress, Int32(rest.count)) }
            }
            if written <= 0 {
                // Nothing written and no error would loop for ever: a broken file system, as EIO.
                let code = written == 0 ? EIO : errno
                throw Self.userError(SystemError("write", path: path, errno: code), path: path)
            }
            skip(written, of: &unwritten)
        }
    }

    /// Drops the first `count` bytes from `vectors`: the pieces written whole, then the start of
    /// the next.
    static func skip(_ count: Int, of vectors: inout ArraySlice<iovec>) {
        var left = count
        while let first = vectors.first, left >= first.iov_len {
            left -= first.iov_len
            vectors.removeFirst()
        }
        if left > 0, let first = vectors.indices.first {
            vectors[first].iov_base += left
            vectors[first].iov_len -= left
        }
    }

    /// `pieces` laid end to end in a page-aligned buffer, as O_DIRECT needs. (Without O_DIRECT
    /// the pieces are written where they are: on tmpfs a stamped 2.3 MB copy written from its
    /// three pieces ran at 1.9-2.1 GB/s, gathered first at 1.6-1.7, in alternating runs; the
    /// source's alignment made no difference to the kernel's copy on this machine.)
    private func gathered(_ pieces: [UnsafeRawBufferPointer], lastPieceID: Int?) -> UnsafeRawBufferPointer {
        let size = pieces.reduce(0) { $0 + $1.count }
        let alignment = Self.directAlignment
        if (alignedBuffer?.count ?? 0) < size {
            alignedBuffer?.deallocate()
            alignedBuffer = .allocate(byteCount: max(alignment, (size + alignment - 1) / alignment * alignment), alignment: alignment)
            staged = nil
        }
        let buffer = alignedBuffer!
        var filled = 0
        for (index, piece) in pieces.enumerated() {
            if index == pieces.count - 1 {
                let place = lastPieceID.map { (id: $0, offset: filled, count: piece.count) }
                if let place, let staged, staged == place { break }
                staged = place
            }
            UnsafeMutableRawBufferPointer(rebasing: buffer[filled..<(filled + piece.count)]).copyMemory(from: piece)
            filled += piece.count
        }
        return UnsafeRawBufferPointer(rebasing: buffer[0..<size])
    }

    /// Writes the whole blocks of `bytes` (aligned: `gathered`) with O_DIRECT, and the last
    /// partial block (O_DIRECT writes whole blocks only) through the page cache.
    private func writeDirect(fd: Int32, bytes: UnsafeRawBufferPointer, path: String, directory: String) throws {
        guard clinux_set_direct(fd, 1) == 0 else {
            let reason = SystemError("fcntl O_DIRECT", path: directory)
            directWorks = false
            directRefused?("\(directory) does not take O_DIRECT (\(reason.reason)); writing through the page cache")
            return try Self.writeAll(fd: fd, pieces: [bytes], path: path)
        }
        directWorks = true
        let whole = bytes.count / Self.directAlignment * Self.directAlignment
        if whole > 0 { try Self.writeAll(fd: fd, pieces: [UnsafeRawBufferPointer(rebasing: bytes[0..<whole])], path: path) }
        if clinux_set_direct(fd, 0) != 0 { throw Self.userError(SystemError("fcntl", path: path), path: path) }
        if whole < bytes.count {
            try Self.writeAll(fd: fd, pieces: [UnsafeRawBufferPointer(rebasing: bytes[whole..<bytes.count])], path: path)
        }
    }

    /// Makes `directory` (and its missing parents) ready for saves, the first of them `path`.
    private func prepare(directory: String, saving path: String) throws {
        guard directory != preparedDirectory else { return }
        directWorks = nil
        noReplace = .unknown
        unnamedFiles = nil
        var opened: (fd: Int32, identity: FileIdentity)?
        do {
            if let tree, tree.holds(directory) {
                opened = try tree.open(directory)
            } else {
                try Directories.create(directory)
            }
        } catch let error as SystemError {
            let failed = error.path ?? directory
            if error.errno == ENOSPC || error.errno == EDQUOT {
                // A new directory (`{seq/1000}`) takes space too, a whole cluster on FAT: no space
                // for it ends a fill as no space for a file does. No inode or name left does not.
                let parent = PathText.directory(of: failed)
                let parentFD = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                defer { if parentFD >= 0 { close(parentFD) } }
                if error.errno == ENOSPC, parentFD >= 0,
                   let noRoom = Self.noRoomForName(path: path, directory: parent, directoryFD: parentFD, bytes: []) {
                    throw noRoom
                }
                throw Self.userError(error, path: path)
            }
            throw CamrollError(error.outputExitCode, "cannot create directory \(failed): \(error.reason)")
        }
        // Asked of the descriptor where the tree opened one: the path may lead elsewhere by now.
        if (opened.map { faccessat($0.fd, ".", W_OK, 0) } ?? access(directory, W_OK)) != 0 {
            let reason = SystemError("access").reason
            if let opened { close(opened.fd) }
            throw CamrollError(.cannotCreate, "cannot write to directory \(directory): \(reason)")
        }
        if directoryFD >= 0 { close(directoryFD) }
        preparedDirectory = nil
        directoryIdentity = nil
        if let opened {
            directoryFD = opened.fd
            directoryIdentity = opened.identity
        } else {
            directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if directoryFD < 0 {
                let error = SystemError("open", path: directory)
                throw CamrollError(error.outputExitCode, "cannot open directory \(directory): \(error.reason)")
            }
            var status = stat()
            if fstat(directoryFD, &status) == 0 { directoryIdentity = FileIdentity(status) }
        }
        preparedDirectory = directory
    }

    /// With `--fsync`, a file counts as saved only once its directory entry is on disk too.
    private func syncDirectory(path: String) throws {
        guard sync else { return }
        if fsync(directoryFD) != 0 {
            let error = SystemError("fsync", path: preparedDirectory)
            let said = Self.userError(error, path: path)
            throw CamrollError(
                said.exitCode, "\(path) is in place, but its directory could not be synced: \(error)", hint: said.hint,
                systemErrno: said.systemErrno)
        }
    }

    /// The file is under its final name and was handed to `whenNamed` (as not synced), but its
    /// directory's fsync failed: the run ends with `error`, counting the file.
    public struct NamedButNotSynced: Error {
        public let path: String
        public let error: CamrollError
    }

    static func userError(_ error: SystemError, path: String) -> CamrollError {
        // "cannot save X: fsync: Input/output error", not X twice.
        let failure = error.path == path ? "\(error.call): \(error.reason)" : error.description
        switch error.errno {
        case EEXIST:
            return CamrollError(
                .cannotCreate, "\(path) already exists",
                hint: "Use --overwrite to replace it, or a -o template that names each photo apart, e.g. with {uuid} or {ms}.")
        case ENOSPC:
            return CamrollError(.ioError, "no space left on device while saving \(path)", systemErrno: ENOSPC)
        case EDQUOT:
            return CamrollError(.ioError, "disk quota exceeded while saving \(path)", systemErrno: EDQUOT)
        case EFBIG:
            return CamrollError(.ioError, "file too large: \(path)")
        case EIO:
            return CamrollError(
                error.outputExitCode, "cannot save \(path): \(failure)",
                hint: "The device failed the write: removed, or failing? 'dmesg' tells more; 'camroll verify' checks what was saved.")
        default:
            return CamrollError(error.outputExitCode, "cannot save \(path): \(failure)")
        }
    }
}

/// The temporary file being written, and whether the writer may go on, under one lock: a second
/// signal (`stop`) removes the file being written and forbids any further rename, while the
/// writer renames and records under the same lock. So once `stop` returns, every file under a
/// final name has been handed to `whenNamed`, and no other will appear.
public final class WriteGate: Sendable {
    private struct State {
        var directoryFD: Int32 = -1
        var temporary: String?
        var stopped = false
    }

    private let state = Locked(State())
    /// `state.stopped`, read without the lock where a file not yet named is all that is at stake.
    private let stoppedSeen = Atomic<Bool>(false)

    public init() {}

    /// Thrown to the writer once stopped; the process exits soon after (the saver takes it for
    /// the cancellation it is, should it get there first).
    struct Stopped: Error {}

    /// Creates the temporary file and records its name under the lock: `stop` either sees the
    /// file or runs before it can be created. The descriptor, or -1 and the open's errno.
    func create(directoryFD: Int32, name: String) throws -> (fd: Int32, errno: Int32) {
        try state.withLock { state in
            if state.stopped { throw Stopped() }
            let fd = name.withCString { name in
                retryingOnInterrupt {
                    openat(directoryFD, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
                }
            }
            guard fd >= 0 else { return (-1, errno) }
            state.directoryFD = directoryFD
            state.temporary = name
            return (fd, 0)
        }
    }

    /// Creates a file without a name in the directory: nothing for `stop` to remove (it goes
    /// with the process), but none is made once stopped. The descriptor, or -1 and the errno.
    /// Without the lock: a file without a name made just as `stop` runs is never named (`commit`
    /// checks under the lock) and goes when it is closed.
    func createUnnamed(directoryFD: Int32) throws -> (fd: Int32, errno: Int32) {
        if stoppedSeen.load(ordering: .acquiring) { throw Stopped() }
        let fd = retryingOnInterrupt { clinux_open_unnamed(directoryFD, 0o644) }
        return fd >= 0 ? (fd, 0) : (-1, errno)
    }

    func commit<T>(_ body: () throws -> T) throws -> T {
        try state.withLock { state in
            if state.stopped { throw Stopped() }
            defer { state.temporary = nil }
            return try body()
        }
    }

    func clear() { state.withLock { $0.temporary = nil } }

    /// The second signal's way out: remove the file being written, allow no further rename.
    public func stop() {
        state.withLock { state in
            if let temporary = state.temporary { unlinkat(state.directoryFD, temporary, 0) }
            state.temporary = nil
            state.stopped = true
            stoppedSeen.store(true, ordering: .releasing)
        }
    }
}

/// A file as the kernel knows it, whatever its name: its device and inode.
public struct FileIdentity: Hashable, Sendable {
    let device: UInt64
    let inode: UInt64

    init(_ status: stat) {
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
    }

    init(device: UInt64, inode: UInt64) {
        self.device = device
        self.inode = inode
    }

    /// The file at `path` (not following a final symbolic link), or nil when there is none.
    init?(path: String) {
        var status = stat()
        guard lstat(path, &status) == 0 else { return nil }
        self.init(status)
    }
}

#!/usr/bin/python3
"""A file system that misbehaves: a passthrough of DIR through FUSE (python3-fusepy) where every
fsync of a directory fails with EIO — what a dying card does to the last step of a save with
--fsync, made to happen every time. With --unlimited-space its statfs says 2^64-1 blocks of
everything, as FUSE servers for cloud storage say "unlimited", and directories sync. With
--renames-find-nothing every rename says ENOENT, as FAT does on a card that fails as it is read
(it cannot tell a directory it cannot read from a name not in it); with --directories-sync too,
the card is well and the file was removed by something else. With --listings-fail, listing a
directory fails with EIO while a file .listings-fail is at the top of DIR (a card that fails as
it is read, and reads again once it is taken out and put back). For the storage tests; not a tool.

    faultfs.py [--unlimited-space] [--renames-find-nothing] [--directories-sync] [--listings-fail] DIR MOUNTPOINT
        (runs in the foreground until unmounted)
"""
import errno
import os
import sys

from fusepy import FUSE, FuseOSError, Operations


class Misbehaving(Operations):
    def __init__(self, root, options):
        self.root = root
        self.unlimited_space = "--unlimited-space" in options
        self.renames_find_nothing = "--renames-find-nothing" in options
        self.directories_sync = self.unlimited_space or "--directories-sync" in options
        self.listings_fail = "--listings-fail" in options

    def _path(self, path):
        return os.path.join(self.root, path.lstrip("/"))

    def getattr(self, path, fh=None):
        status = os.lstat(self._path(path))
        return {key: getattr(status, key) for key in (
            "st_mode", "st_nlink", "st_uid", "st_gid", "st_size", "st_atime", "st_mtime", "st_ctime")}

    def access(self, path, mode):
        if not os.access(self._path(path), mode):
            raise FuseOSError(errno.EACCES)

    def readdir(self, path, fh):
        if self.listings_fail and os.path.exists(os.path.join(self.root, ".listings-fail")):
            raise FuseOSError(errno.EIO)
        return [".", ".."] + os.listdir(self._path(path))

    def statfs(self, path):
        status = os.statvfs(self._path(path))
        reply = {key: getattr(status, key) for key in (
            "f_bavail", "f_bfree", "f_blocks", "f_bsize", "f_favail", "f_ffree", "f_files", "f_flag", "f_frsize",
            "f_namemax")}
        if self.unlimited_space:
            reply.update({key: (1 << 64) - 1 for key in ("f_bavail", "f_bfree", "f_blocks", "f_favail", "f_ffree", "f_files")})
        return reply

    def mkdir(self, path, mode):
        os.mkdir(self._path(path), mode)

    def rmdir(self, path):
        os.rmdir(self._path(path))

    def unlink(self, path):
        os.unlink(self._path(path))

    def link(self, target, source):
        if self.renames_find_nothing:  # no hard links either, as on FAT: files are renamed into place
            raise FuseOSError(errno.EPERM)
        os.link(self._path(source), self._path(target))

    def rename(self, old, new):
        if self.renames_find_nothing:
            raise FuseOSError(errno.ENOENT)
        os.rename(self._path(old), self._path(new))

    def chmod(self, path, mode):
        os.chmod(self._path(path), mode)

    def utimens(self, path, times=None):
        os.utime(self._path(path), times)

    def create(self, path, mode, fi=None):
        return os.open(self._path(path), os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)

    def open(self, path, flags):
        return os.open(self._path(path), flags)

    def read(self, path, size, offset, fh):
        return os.pread(fh, size, offset)

    def write(self, path, data, offset, fh):
        return os.pwrite(fh, data, offset)

    def truncate(self, path, length, fh=None):
        os.truncate(self._path(path), length)

    def flush(self, path, fh):
        return 0

    def release(self, path, fh):
        os.close(fh)

    def fsync(self, path, datasync, fh):
        os.fsync(fh)

    def fsyncdir(self, path, datasync, fh):
        if self.directories_sync:
            return 0
        raise FuseOSError(errno.EIO)


if __name__ == "__main__":
    options = [argument for argument in sys.argv[1:] if argument.startswith("--")]
    root, mountpoint = [argument for argument in sys.argv[1:] if not argument.startswith("--")]
    FUSE(Misbehaving(root, options), mountpoint, foreground=True, nothreads=True)

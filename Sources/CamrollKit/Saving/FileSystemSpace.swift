import Glibc

/// A file system's space in bytes, as `statvfs` gives it in blocks. Saturating: a FUSE file
/// system reports whatever its server says, and some say "unlimited" with counts near 2^64,
/// which `Int(blocks) * blockSize` would trap on.
extension statvfs {
    /// Space an unprivileged writer may still use.
    var availableBytes: Int { Self.bytes(f_bavail, blockSize: f_frsize) }

    /// The file system's size.
    var totalBytes: Int { Self.bytes(f_blocks, blockSize: f_frsize) }

    static func bytes(_ blocks: UInt, blockSize: UInt) -> Int {
        let (product, overflow) = blocks.multipliedReportingOverflow(by: blockSize)
        return overflow ? Int.max : Int(clamping: product)
    }
}

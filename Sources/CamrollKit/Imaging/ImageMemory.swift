import CPixels

/// Memory for a picture's pixels, sized with overflow checks and asked of malloc before the
/// array that holds it is made: a Swift array whose allocation fails stops the process (exit
/// 134, "failed to allocate N bytes"), where a picture too large for the memory this process may
/// have (`ulimit -v`, a cgroup, a small board) is bad input, exit 65.
///
/// malloc's answer is given back at once and the array allocated in its place: glibc maps a
/// block this large on its own and unmaps it on free, so the array's mapping is the one just
/// granted, unless another thread took that room in between (none of camroll's allocates more
/// than a frame's worth at a time). The array is left uninitialised (its bytes are written by the
/// decoder): pages that are never written are never resident, so a picture that claims a size
/// its data does not fill costs the memory of what it holds, not of what it claims.
enum ImageMemory {
    /// `width` x `height` x `bytesPerPixel`, or the error for a size no memory holds.
    static func bytes(width: Int, height: Int, bytesPerPixel: Int) throws -> Int {
        let (pixels, overflow1) = width.multipliedReportingOverflow(by: height)
        let (bytes, overflow2) = pixels.multipliedReportingOverflow(by: bytesPerPixel)
        guard width > 0, height > 0, !overflow1, !overflow2 else {
            throw tooLarge(width: width, height: height, bytes: nil)
        }
        return bytes
    }

    /// An array of `width` x `height` x `bytesPerPixel` bytes, uninitialised, or exit 65 when
    /// malloc cannot give that much.
    static func pixels(width: Int, height: Int, bytesPerPixel: Int) throws -> [UInt8] {
        let count = try bytes(width: width, height: height, bytesPerPixel: bytesPerPixel)
        return try uninitialized(count: count, width: width, height: height)
    }

    /// `count` bytes for a `width` x `height` picture (named in the error when they cannot be had).
    static func uninitialized(count: Int, width: Int, height: Int) throws -> [UInt8] {
        try reserve(count, width: width, height: height)
        return [UInt8](unsafeUninitializedCapacity: count) { _, initialized in initialized = count }
    }

    /// A copy of `count` bytes at `start` (an encoder's output), with the same check.
    static func copy(_ start: UnsafePointer<UInt8>, count: Int, width: Int, height: Int) throws -> [UInt8] {
        try reserve(count, width: width, height: height)
        return Array(UnsafeBufferPointer(start: start, count: count))
    }

    /// Throws unless malloc can give `count` bytes now, for a `width` x `height` picture: what
    /// a whole decode and encode will take, asked once before the first of its allocations, so
    /// that the error states that cost rather than the part of it that did not fit.
    static func reserve(_ count: Int, width: Int, height: Int) throws {
        // 64 kB: below that an array's allocation is not what runs the process out of memory.
        guard count > 1 << 16 else { return }
        guard cpixels_can_allocate(count) != 0 else { throw tooLarge(width: width, height: height, bytes: count) }
    }

    static let tooLargeMessage = "image too large for memory: "

    /// Exit 65: "image too large for memory: 20000x4999 needs 300 MB".
    static func tooLarge(width: Int, height: Int, bytes: Int?) -> CamrollError {
        let needs = bytes.map { " needs \(megabytes($0))" } ?? " cannot be held in memory"
        return CamrollError(
            .dataError, tooLargeMessage + "\(width)x\(height)\(needs)",
            hint: "Give camroll more memory (ulimit -v, the service's MemoryMax), or a smaller picture.")
    }

    /// Whether `error` is `tooLarge`'s (passed on as it is, not as a damaged picture).
    static func isTooLarge(_ error: CamrollError) -> Bool { error.message.hasPrefix(tooLargeMessage) }

    /// `300 MB` (decimal, as camroll's other sizes), at least `1 MB`.
    static func megabytes(_ bytes: Int) -> String {
        "\(max(1, (bytes + 500_000) / 1_000_000)) MB"
    }
}

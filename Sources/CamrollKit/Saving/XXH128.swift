import CXXHash

/// XXH3-128 digests in lowercase hex, exactly as `xxhsum -H2` prints them (canonical,
/// big-endian), so that `xxhsum -H2 -c` can check camroll's files without camroll.
public enum XXH128 {
    public static func hex(of bytes: UnsafeRawBufferPointer) -> String {
        hex(XXH3_128bits(bytes.baseAddress, bytes.count))
    }

    public static func hex(of bytes: [UInt8]) -> String {
        bytes.withUnsafeBytes { hex(of: $0) }
    }

    /// The digest of several pieces laid end to end, without joining them.
    public static func hex(ofPieces pieces: [UnsafeRawBufferPointer]) -> String {
        let hasher = Streaming()
        for piece in pieces { hasher.update(piece) }
        return hasher.hex()
    }

    /// A digest fed piece by piece (a file read in blocks, a JPEG written in parts).
    public final class Streaming {
        private let state: OpaquePointer?
        private var fallback: [UInt8] = []  // used only if the state could not be allocated

        public init() {
            state = XXH3_createState()
            if let state { XXH3_128bits_reset(state) }
        }

        deinit { if let state { XXH3_freeState(state) } }

        public func update(_ bytes: UnsafeRawBufferPointer) {
            if let state {
                XXH3_128bits_update(state, bytes.baseAddress, bytes.count)
            } else {
                fallback += bytes
            }
        }

        public func hex() -> String {
            guard let state else { return XXH128.hex(of: fallback) }
            return XXH128.hex(XXH3_128bits_digest(state))
        }
    }

    static func hex(_ hash: XXH128_hash_t) -> String {
        var canonical = XXH128_canonical_t()
        XXH128_canonicalFromHash(&canonical, hash)
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        return withUnsafeBytes(of: canonical.digest) { raw in
            var out = [UInt8](repeating: 0, count: 32)
            for (index, byte) in raw.enumerated() {
                out[2 * index] = digits[Int(byte >> 4)]
                out[2 * index + 1] = digits[Int(byte & 0xf)]
            }
            return String(decoding: out, as: UTF8.self)
        }
    }
}

/// A JPEG COM segment, placed right after SOI. `--stamp` gives every copy its own, so copies
/// differ byte-wise (aliasing between files becomes detectable) while decoding identically.
public enum JPEGComment {
    public static let startOfImage: [UInt8] = [0xFF, 0xD8]

    /// FF FE, a big-endian length that counts itself, then the text (at most 65533 bytes).
    public static func segment(_ text: String) -> [UInt8] {
        let payload = Array(text.utf8.prefix(65533))
        let length = payload.count + 2
        return [0xFF, 0xFE, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
    }
}

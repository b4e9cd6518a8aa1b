/// A JPEG COM segment, placed right after SOI. `--stamp` gives every copy its own, so copies
/// differ byte-wise (aliasing between files becomes detectable) while decoding identically.
public enum JPEGComment {
    public static let startOfImage: [UInt8] = [0xFF, 0xD8]

    /// FF FE, a big-endian length that counts itself, then the text (at most 65533 bytes),
    /// followed by spaces up to a whole number of `multiple` bytes for the segment.
    public static func segment(_ text: String, paddedToMultipleOf multiple: Int = 1) -> [UInt8] {
        var payload = Array(text.utf8.prefix(65533))
        let padding = (multiple - (4 + payload.count) % multiple) % multiple
        payload += repeatElement(UInt8(ascii: " "), count: min(padding, 65533 - payload.count))
        let length = payload.count + 2
        return [0xFF, 0xFE, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
    }

    /// The copy's own stamp (`--stamp`): "camroll run=UUID seq=N", the segment padded to a
    /// multiple of 64 bytes. A stamped copy is SOI, this, then the rest of the JPEG; so padded,
    /// the rest lies in the file at the offset (within 64 bytes) it has in memory, where the
    /// JPEG starts a page (`BatchSaver.withJPEG`). The kernel copies a write into the page cache
    /// with `rep movsb`, which on some processors takes up to twice as long when the two offsets
    /// differ by a little: writes of 2.3 MB to a tmpfs here (AMD EPYC) took 0.88 ms with the
    /// offsets equal and 1.5-2.3 ms with the file's 2 to 28 bytes ahead — as an unpadded stamp put it.
    public static func stamp(run: String, seq: Int) -> [UInt8] {
        segment("camroll run=\(run) seq=\(seq)", paddedToMultipleOf: 64)
    }

    /// The seq a stamp's text names after `prefix` ("camroll run=UUID seq="), its padding ignored.
    public static func stampedSeq(_ text: Substring) -> Int? {
        Int(text.prefix { $0 != " " })
    }
}

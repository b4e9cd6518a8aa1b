import CSpng

/// PNG files with libspng: any bit depth and colour type to 8-bit RGB; transparency flattened
/// onto white (a photo has no alpha: that is what a browser shows behind it).
public enum PNGDecoder {
    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    public static func isPNG(_ bytes: [UInt8]) -> Bool { bytes.starts(with: signature) }

    /// A PNG's pixels and its eXIf chunk, if any, as a JPEG's APP1 holds it ("Exif\0\0" and the
    /// TIFF block).
    public struct Picture {
        public var image: RGBImage
        public var exif: [UInt8]?

        /// Its EXIF Orientation (1…8; 1 without one).
        public var orientation: Int { exif.map { Exif.orientation(ofBlock: $0[...]) } ?? 1 }
    }

    /// The picture's size from its header, refused over `JPEGDecoder.maxPixels` before anything
    /// is decoded, then its pixels. `.dataError` for anything that does not decode cleanly.
    public static func decode(_ bytes: [UInt8], subject: String) throws -> RGBImage {
        try read(bytes, subject: subject).image
    }

    /// The same, with the eXIf chunk.
    public static func read(_ bytes: [UInt8], subject: String) throws -> Picture {
        var why = [CChar](repeating: 0, count: 256)
        guard cspng_load(&why, why.count) != 0 else {
            throw CamrollError(.unavailable, "cannot read \(subject): PNG files need libspng: \(String(nulTerminated: why))",
                               hint: "Install libspng (Debian: apt install libspng0).")
        }
        guard let context = cspng_ctx_new(0) else { throw CamrollError(.failure, "cannot initialise the PNG decoder") }
        defer { cspng_ctx_free(context) }
        func check(_ status: Int32, _ what: String) throws {
            guard status == 0 else {
                throw CamrollError(.dataError, "\(subject) is not a valid PNG: \(what): \(String(cString: cspng_strerror(status)))")
            }
        }
        // Ancillary chunks (text, profiles, EXIF) limited to 1 MB each where libspng checks, 8 MB in all.
        try check(cspng_set_chunk_limits(context, 1 << 20, 8 << 20), "limits")
        // libspng reads from the buffer until the end: everything happens while it is borrowed.
        return try bytes.withUnsafeBytes { buffer in
            try check(cspng_set_png_buffer(context, buffer.baseAddress, buffer.count), "buffer")
            var header = spng_ihdr()
            try check(cspng_get_ihdr(context, &header), "header")
            let width = Int(header.width), height = Int(header.height)
            try JPEGDecoder.refuseIfTooLarge(
                JPEGDecoder.Header(width: width, height: height), subject: subject, bytesPerPixel: bytesPerPixel)
            try ImageMemory.reserve(
                try ImageMemory.bytes(width: width, height: height, bytesPerPixel: bytesPerPixel), width: width, height: height)
            let exifBefore = Self.exif(of: context)
            // Decoded a row at a time straight into RGB: the picture's memory is its 3 bytes a
            // pixel and one row, not an RGBA copy beside it (4 bytes a pixel more).
            var rgb = try ImageMemory.pixels(width: width, height: height, bytesPerPixel: 3)
            let status = rgb.withUnsafeMutableBytes { destination in
                cspng_decode_rgb_over_white(context, destination.baseAddress, destination.count)
            }
            guard status != CSPNG_OUT_OF_MEMORY else { throw ImageMemory.tooLarge(width: width, height: height, bytes: width * 4) }
            try check(status, "image data")
            // Asked again after the image data, so that a chunk after it is found too; one read
            // before stays when the file's end cannot be read (a download cut short). A block
            // libspng refuses (not a TIFF block) leaves the picture without EXIF.
            let exif = exifBefore ?? Self.exif(of: context)
            return Picture(image: RGBImage(width: width, height: height, pixels: rgb), exif: exif)
        }
    }

    /// The eXIf chunk read so far, as an APP1 payload ("Exif\0\0" and the TIFF block); nil
    /// without one.
    private static func exif(of context: OpaquePointer) -> [UInt8]? {
        var block = spng_exif()
        guard cspng_get_exif(context, &block) == 0, let data = block.data, block.length > 0 else { return nil }
        return JPEGSegments.exifSignature + UnsafeRawBufferPointer(start: data, count: block.length).map { $0 }
    }

    /// What a PNG costs a pixel on its way to a JPEG: decoded (3 bytes), then encoded (turbojpeg's
    /// worst-case buffer for 4:2:0, 3 more).
    static let bytesPerPixel = 6
}

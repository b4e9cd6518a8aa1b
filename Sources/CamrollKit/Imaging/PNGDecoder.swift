import CSpng

/// PNG files with libspng: any bit depth and colour type to 8-bit RGB; transparency flattened
/// onto white (a photo has no alpha: that is what a browser shows behind it).
public enum PNGDecoder {
    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    public static func isPNG(_ bytes: [UInt8]) -> Bool { bytes.starts(with: signature) }

    /// The picture's size from its header, refused over `JPEGDecoder.maxPixels` before anything
    /// is decoded, then its pixels. `.dataError` for anything that does not decode cleanly.
    public static func decode(_ bytes: [UInt8], subject: String) throws -> RGBImage {
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
        // Ancillary chunks (text, profiles) limited to 1 MB each, 8 MB in all.
        try check(cspng_set_chunk_limits(context, 1 << 20, 8 << 20), "limits")
        // libspng reads from the buffer until the end: everything happens while it is borrowed.
        let (width, height, rgba) = try bytes.withUnsafeBytes { buffer in
            try check(cspng_set_png_buffer(context, buffer.baseAddress, buffer.count), "buffer")
            var header = spng_ihdr()
            try check(cspng_get_ihdr(context, &header), "header")
            let width = Int(header.width), height = Int(header.height)
            try JPEGDecoder.refuseIfTooLarge(JPEGDecoder.Header(width: width, height: height), subject: subject)
            var size = 0
            try check(cspng_decoded_image_size(context, Int32(SPNG_FMT_RGBA8.rawValue), &size), "size")
            guard size == width * height * 4 else { throw CamrollError(.dataError, "\(subject) is not a valid PNG: odd size") }
            var rgba = [UInt8](repeating: 0, count: size)
            let status = rgba.withUnsafeMutableBytes { destination in
                cspng_decode_image(
                    context, destination.baseAddress, destination.count, Int32(SPNG_FMT_RGBA8.rawValue),
                    Int32(SPNG_DECODE_TRNS.rawValue))
            }
            try check(status, "image data")
            return (width, height, rgba)
        }
        return RGBImage(width: width, height: height, pixels: flattenedOnWhite(rgba))
    }

    /// RGBA → RGB over white: each channel c·a + 255·(1 − a), rounded.
    static func flattenedOnWhite(_ rgba: [UInt8]) -> [UInt8] {
        var rgb = [UInt8](repeating: 0, count: rgba.count / 4 * 3)
        for pixel in 0..<(rgba.count / 4) {
            let alpha = Int(rgba[pixel * 4 + 3])
            for channel in 0..<3 {
                rgb[pixel * 3 + channel] = UInt8((Int(rgba[pixel * 4 + channel]) * alpha + 255 * (255 - alpha) + 127) / 255)
            }
        }
        return rgb
    }
}

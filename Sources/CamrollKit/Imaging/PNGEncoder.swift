import CSpng
import Glibc

/// The picture encoding a run saves: JPEG, or PNG (`-o NAME.png`, `--encoding png`).
public enum PictureEncoding: String, Sendable, Equatable {
    case jpeg, png
}

/// PNG files with libspng (loaded on first use, as for PNG input): 8-bit RGB or grey, the EXIF
/// block in an eXIf chunk.
enum PNGEncoder {
    static func encode(_ pixels: [UInt8], width: Int, height: Int, channels: Int, exif: ArraySlice<UInt8>?) throws -> [UInt8] {
        var why = [CChar](repeating: 0, count: 256)
        guard cspng_load(&why, why.count) != 0 else {
            throw CamrollError(.unavailable, "cannot write a PNG: it needs libspng: \(String(nulTerminated: why))",
                               hint: "Install libspng (Debian: apt install libspng0), or save a JPEG.")
        }
        var size = 0
        var error: Int32 = 0
        let tiff = exif.map(Array.init) ?? []
        let output = pixels.withUnsafeBufferPointer { pixels in
            tiff.withUnsafeBufferPointer { block in
                cspng_encode(pixels.baseAddress, UInt32(width), UInt32(height), Int32(channels),
                             block.isEmpty ? nil : block.baseAddress, block.count, &size, &error)
            }
        }
        guard let output else {
            throw CamrollError(.failure, "cannot encode the \(width)x\(height) PNG: \(String(cString: cspng_strerror(error)))")
        }
        defer { free(output) }
        return Array(UnsafeBufferPointer(start: output, count: size))
    }
}

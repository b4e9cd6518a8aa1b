import CPixels

/// Decoded pixels, 3 bytes (R, G, B) each, rows packed: what resizing, cropping and turning
/// upright work on.
public struct RGBImage: Sendable {
    public var width: Int
    public var height: Int
    public var pixels: [UInt8]

    public init(width: Int, height: Int, pixels: [UInt8]) {
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    public var frame: Frame {
        Frame(format: .rgb24, width: width, height: height, bytesPerLine: width * 3, bytes: pixels,
              sequence: 0, capturedAt: .init(timeIntervalSince1970: 0), fullRange: true)
    }

    /// The picture as it is meant to be seen, for an EXIF `orientation` (1…8) that says how
    /// the stored pixels are turned or mirrored.
    public func upright(_ orientation: Int) throws -> RGBImage {
        guard (2...8).contains(orientation) else { return self }
        let transposed = orientation >= 5
        let outWidth = transposed ? height : width, outHeight = transposed ? width : height
        var out = try ImageMemory.uninitialized(count: pixels.count, width: outWidth, height: outHeight)
        pixels.withUnsafeBufferPointer { source in
            out.withUnsafeMutableBufferPointer { destination in
                for y in 0..<outHeight {
                    for x in 0..<outWidth {
                        let (sx, sy) = Self.storedPoint(x, y, orientation: orientation, width: width, height: height)
                        let from = (sy * width + sx) * 3, to = (y * outWidth + x) * 3
                        destination[to] = source[from]
                        destination[to + 1] = source[from + 1]
                        destination[to + 2] = source[from + 2]
                    }
                }
            }
        }
        return RGBImage(width: outWidth, height: outHeight, pixels: out)
    }

    /// Where the pixel shown at (`x`, `y`) is stored, in a `width` x `height` (stored) picture
    /// with EXIF `orientation`.
    static func storedPoint(_ x: Int, _ y: Int, orientation: Int, width: Int, height: Int) -> (Int, Int) {
        switch orientation {
        case 2: (width - 1 - x, y)                    // mirrored left-right
        case 3: (width - 1 - x, height - 1 - y)       // turned 180°
        case 4: (x, height - 1 - y)                   // mirrored top-bottom
        case 5: (y, x)                                // transposed
        case 6: (y, height - 1 - x)                   // to be turned 90° clockwise
        case 7: (width - 1 - y, height - 1 - x)       // transversed
        case 8: (width - 1 - y, x)                    // to be turned 90° anticlockwise
        default: (x, y)
        }
    }

    public func cropped(_ rect: PixelRect) throws -> RGBImage {
        if rect == PixelRect(x: 0, y: 0, width: width, height: height) { return self }
        var out = try ImageMemory.pixels(width: rect.width, height: rect.height, bytesPerPixel: 3)
        let rowBytes = rect.width * 3
        pixels.withUnsafeBufferPointer { source in
            out.withUnsafeMutableBufferPointer { destination in
                for row in 0..<rect.height {
                    let from = ((rect.y + row) * width + rect.x) * 3
                    guard let to = destination.baseAddress, let base = source.baseAddress else { return }
                    (to + row * rowBytes).update(from: base + from, count: rowBytes)
                }
            }
        }
        return RGBImage(width: rect.width, height: rect.height, pixels: out)
    }

    /// Resampled to exactly `size` with a Lanczos-3 filter in linear light (cpixels.h):
    /// shrinking, the kernel is widened by the scale factor, so that detail finer than the new
    /// size can hold is filtered out instead of aliasing into false patterns; enlarging, the
    /// same filter interpolates (camroll's own steps never enlarge: `-r` is a box to fit in).
    public func resized(to size: Resolution) throws -> RGBImage {
        if size.width == width && size.height == height { return self }
        var out = try ImageMemory.pixels(width: size.width, height: size.height, bytesPerPixel: 3)
        guard pixels.count >= width * height * 3 else {
            throw CamrollError(.dataError, "\(pixels.count) bytes are too few for a \(width)x\(height) RGB picture")
        }
        let status = pixels.withUnsafeBufferPointer { source in
            out.withUnsafeMutableBufferPointer { destination in
                cpixels_resize_rgb(
                    source.baseAddress, width * 3, Int32(width), Int32(height), destination.baseAddress, size.width * 3,
                    Int32(size.width), Int32(size.height), 1)
            }
        }
        // The filter's own memory (its weights, a few rows at floating point) could not be had.
        guard status == 0 else { throw ImageMemory.tooLarge(width: size.width, height: size.height, bytes: nil) }
        return RGBImage(width: size.width, height: size.height, pixels: out)
    }
}

/// A rectangle of pixels.
public struct PixelRect: Sendable, Equatable, CustomStringConvertible {
    public var x: Int, y: Int, width: Int, height: Int

    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public var description: String { "\(width)x\(height)+\(x)+\(y)" }

    /// This rectangle of the picture as shown, in the stored pixels of a `width` x `height`
    /// picture with EXIF `orientation`.
    func stored(orientation: Int, width: Int, height: Int) -> PixelRect {
        let a = RGBImage.storedPoint(x, y, orientation: orientation, width: width, height: height)
        let b = RGBImage.storedPoint(x + self.width - 1, y + self.height - 1, orientation: orientation, width: width, height: height)
        return PixelRect(x: min(a.0, b.0), y: min(a.1, b.1), width: abs(a.0 - b.0) + 1, height: abs(a.1 - b.1) + 1)
    }
}

/// `--crop`: a size (`800x600`, optionally placed: `800x600+10+20`) or an aspect ratio (`1:1`,
/// `413:626`); without a place, the crop is centred.
public enum CropRequest: Sendable, Equatable, CustomStringConvertible {
    case size(width: Int, height: Int, x: Int?, y: Int?)
    case aspect(Int, Int)

    public init?(parsing text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        if parts.count == 2 {
            guard let w = Int(parts[0]), let h = Int(parts[1]), (1...100_000).contains(w), (1...100_000).contains(h) else { return nil }
            self = .aspect(w, h)
            return
        }
        let pieces = text.split(separator: "+", omittingEmptySubsequences: false)
        guard pieces.count == 1 || pieces.count == 3, let size = Resolution(parsing: String(pieces[0])),
              size.width <= 100_000, size.height <= 100_000 else { return nil }
        if pieces.count == 3 {
            guard let x = Int(pieces[1]), let y = Int(pieces[2]), x >= 0, y >= 0, x <= 100_000, y <= 100_000 else { return nil }
            self = .size(width: size.width, height: size.height, x: x, y: y)
        } else {
            self = .size(width: size.width, height: size.height, x: nil, y: nil)
        }
    }

    public var description: String {
        switch self {
        case .aspect(let w, let h): "\(w):\(h)"
        case .size(let w, let h, let x?, let y?): "\(w)x\(h)+\(x)+\(y)"
        case .size(let w, let h, _, _): "\(w)x\(h)"
        }
    }

    /// Whether the crop's corner was given, so it must not be moved.
    var isPlaced: Bool { if case .size(_, _, _?, _?) = self { true } else { false } }

    /// The rectangle of a `width` x `height` picture (as shown) this crop keeps; `.usage` when
    /// it does not fit in it.
    public func rect(width: Int, height: Int) throws -> PixelRect {
        switch self {
        case .aspect(let w, let h):
            // The largest centred rectangle of that shape.
            var cropWidth = width, cropHeight = height
            if width * h > height * w { cropWidth = max(1, height * w / h) } else { cropHeight = max(1, width * h / w) }
            return PixelRect(x: (width - cropWidth) / 2, y: (height - cropHeight) / 2, width: cropWidth, height: cropHeight)
        case .size(let w, let h, let x, let y):
            let left = x ?? (width - w) / 2, top = y ?? (height - h) / 2
            guard w <= width, h <= height, left + w <= width, top + h <= height else {
                throw CamrollError.usage("--crop \(description) does not fit in the \(width)x\(height) picture")
            }
            return PixelRect(x: left, y: top, width: w, height: h)
        }
    }
}

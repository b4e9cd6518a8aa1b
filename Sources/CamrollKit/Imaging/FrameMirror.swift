/// `pick --mirror`: a frame turned left for right, as a selfie camera saves it. The pixels stay
/// in the frame's own format where it is raw (YUYV, YUV 4:2:0, RGB); a JPEG frame is decoded to
/// RGB first (and so encoded again: no lossless mirror is tried for one picture).
extension Frame {
    func mirrored(decoder: JPEGDecoder) throws -> Frame {
        var frame = self
        switch format {
        case .yuyv:
            // A pair of pixels shares its chroma: the pairs are reversed, and the two lumas of each.
            let pairs = width / 2
            guard bytesPerLine >= pairs * 4, bytes.count >= bytesPerLine * (height - 1) + pairs * 4 else { throw tooShort }
            bytes.withUnsafeBufferPointer { from in
                frame.bytes.withUnsafeMutableBufferPointer { to in
                    for row in 0..<height {
                        let start = row * bytesPerLine
                        for pair in 0..<pairs {
                            let source = start + pair * 4, target = start + (pairs - 1 - pair) * 4
                            to[target] = from[source + 2]
                            to[target + 1] = from[source + 1]
                            to[target + 2] = from[source]
                            to[target + 3] = from[source + 3]
                        }
                    }
                }
            }
        case .yuv420:
            let chromaWidth = (width + 1) / 2, chromaHeight = (height + 1) / 2
            guard bytes.count >= width * height + 2 * chromaWidth * chromaHeight else { throw tooShort }
            Self.reverseRows(&frame.bytes, from: 0, width: width, height: height, pixelBytes: 1, stride: width)
            Self.reverseRows(&frame.bytes, from: width * height, width: chromaWidth, height: chromaHeight * 2, pixelBytes: 1, stride: chromaWidth)
        case .rgb24:
            guard bytesPerLine >= width * 3, bytes.count >= bytesPerLine * (height - 1) + width * 3 else { throw tooShort }
            Self.reverseRows(&frame.bytes, from: 0, width: width, height: height, pixelBytes: 3, stride: bytesPerLine)
        case .mjpeg, .jpeg:
            let (header, pixels) = try decoder.decodeRGB(bytes)
            frame = Frame(
                format: .rgb24, width: header.width, height: header.height, bytesPerLine: header.width * 3,
                bytes: pixels, sequence: sequence, capturedAt: capturedAt, fullRange: true, isShotTime: isShotTime)
            return try frame.mirrored(decoder: decoder)
        default:
            throw CamrollError(.dataError, "cannot mirror \(format.code) frames")
        }
        return frame
    }

    private var tooShort: CamrollError {
        CamrollError(.dataError, "a \(format.code) frame of \(bytes.count) bytes is too short for \(width)x\(height)")
    }

    /// Each row of `height` rows of `width` pixels (`pixelBytes` each), from byte `start`,
    /// reversed in place.
    private static func reverseRows(_ bytes: inout [UInt8], from start: Int, width: Int, height: Int, pixelBytes: Int, stride: Int) {
        bytes.withUnsafeMutableBufferPointer { buffer in
            for row in 0..<height {
                var left = start + row * stride, right = left + (width - 1) * pixelBytes
                while left < right {
                    for byte in 0..<pixelBytes { buffer.swapAt(left + byte, right + byte) }
                    left += pixelBytes
                    right -= pixelBytes
                }
            }
        }
    }
}

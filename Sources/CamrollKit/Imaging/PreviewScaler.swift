/// Turns a frame into a small RGB picture for a live preview, cheaply: a JPEG is decoded at
/// the DCT scale nearest the size wanted, YUV is sampled every few pixels. Never the full-size
/// conversion an encode does.
public final class PreviewScaler {
    private lazy var decoder = try? JPEGDecoder()

    public init() {}

    /// At least about `width` x `height` (less when the frame is smaller), aspect kept.
    public func picture(of frame: Frame, width: Int, height: Int) throws -> RGBImage {
        switch frame.format {
        case .mjpeg, .jpeg:
            guard let decoder else { throw CamrollError(.failure, "cannot set up the JPEG decoder") }
            let (header, pixels) = try decoder.decodeRGB(frame.bytes, minimumWidth: width, minimumHeight: height, fast: true)
            return RGBImage(width: header.width, height: header.height, pixels: pixels)
        case .yuyv, .yuv420:
            return try sampledYUV(frame, step: max(1, min(frame.width / max(1, width), frame.height / max(1, height))))
        case .rgb24:
            return sampledRGB(frame, step: max(1, min(frame.width / max(1, width), frame.height / max(1, height))))
        default:
            throw CamrollError(.dataError, "cannot preview \(frame.format.code) frames")
        }
    }

    /// Every `step`-th pixel of every `step`-th row, converted with BT.601.
    private func sampledYUV(_ frame: Frame, step: Int) throws -> RGBImage {
        let width = frame.width / step, height = frame.height / step
        // YUYV: whole pixel pairs (4 bytes) a row, so an odd width reads its last pair in full.
        let pairRow = (frame.width + 1) / 2 * 4
        let needed = frame.format == .yuyv
            ? frame.bytesPerLine * (frame.height - 1) + pairRow
            : frame.width * frame.height + 2 * ((frame.width + 1) / 2) * ((frame.height + 1) / 2)
        guard width > 0, height > 0, frame.bytes.count >= needed, frame.format != .yuyv || frame.bytesPerLine >= pairRow else {
            throw CamrollError(.dataError, "a \(frame.format.code) frame of \(frame.bytes.count) bytes is too short for \(frame.width)x\(frame.height)")
        }
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        let luma = frame.fullRange ? (1.0, 0.0) : (255.0 / 219.0, 16.0)
        let chroma = frame.fullRange ? 1.0 : 255.0 / 224.0
        frame.bytes.withUnsafeBufferPointer { source in
            pixels.withUnsafeMutableBufferPointer { out in
                let chromaWidth = (frame.width + 1) / 2, planeSize = frame.width * frame.height
                let chromaPlane = chromaWidth * ((frame.height + 1) / 2)
                for row in 0..<height {
                    let y0 = row * step
                    for column in 0..<width {
                        let x0 = column * step
                        let y: Int, u: Int, v: Int
                        if frame.format == .yuyv {
                            let pair = y0 * frame.bytesPerLine + (x0 & ~1) * 2
                            y = Int(source[pair + (x0 & 1) * 2])
                            u = Int(source[pair + 1])
                            v = Int(source[pair + 3])
                        } else {
                            y = Int(source[y0 * frame.width + x0])
                            let c = (y0 / 2) * chromaWidth + x0 / 2
                            u = Int(source[planeSize + c])
                            v = Int(source[planeSize + chromaPlane + c])
                        }
                        let l = (Double(y) - luma.1) * luma.0
                        let cb = Double(u - 128) * chroma, cr = Double(v - 128) * chroma
                        let at = (row * width + column) * 3
                        out[at] = Self.clamp(l + 1.402 * cr)
                        out[at + 1] = Self.clamp(l - 0.344136 * cb - 0.714136 * cr)
                        out[at + 2] = Self.clamp(l + 1.772 * cb)
                    }
                }
            }
        }
        return RGBImage(width: width, height: height, pixels: pixels)
    }

    private func sampledRGB(_ frame: Frame, step: Int) -> RGBImage {
        let width = frame.width / step, height = frame.height / step
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        for row in 0..<height {
            for column in 0..<width {
                let from = row * step * frame.bytesPerLine + column * step * 3, to = (row * width + column) * 3
                guard from + 2 < frame.bytes.count else { continue }
                pixels[to] = frame.bytes[from]
                pixels[to + 1] = frame.bytes[from + 1]
                pixels[to + 2] = frame.bytes[from + 2]
            }
        }
        return RGBImage(width: width, height: height, pixels: pixels)
    }

    private static func clamp(_ value: Double) -> UInt8 { UInt8(max(0, min(255, value.rounded()))) }
}

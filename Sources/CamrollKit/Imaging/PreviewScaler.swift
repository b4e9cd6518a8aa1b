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
        // BT.601 in 16.16 fixed point, a table a component: each pixel is three table reads and
        // three adds (a quarter of the cost of the same sums in doubles, rounded one by one).
        let tables = Self.conversionTables(fullRange: frame.fullRange)
        frame.bytes.withUnsafeBufferPointer { source in
            pixels.withUnsafeMutableBufferPointer { out in
                tables.withUnsafeBufferPointer { table in
                    let lumaTable = table.baseAddress!, redV = lumaTable + 256, greenU = redV + 256, greenV = greenU + 256
                    let blueU = greenV + 256
                    let chromaWidth = (frame.width + 1) / 2, planeSize = frame.width * frame.height
                    let chromaPlane = chromaWidth * ((frame.height + 1) / 2)
                    var at = 0
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
                            let l = lumaTable[y]
                            out[at] = Self.clamp(l + redV[v])
                            out[at + 1] = Self.clamp(l + greenU[u] + greenV[v])
                            out[at + 2] = Self.clamp(l + blueU[u])
                            at += 3
                        }
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

    /// A 16.16 fixed-point sum, rounded to the nearest and clamped to 0…255.
    @inline(__always)
    private static func clamp(_ value: Int) -> UInt8 { UInt8(truncatingIfNeeded: max(0, min(255, (value + 0x8000) >> 16))) }

    /// Five tables of 256: luma, then red from V, green from U, green from V, blue from U, each
    /// entry in 16.16 fixed point (BT.601; limited range expanded unless `fullRange`).
    private static func conversionTables(fullRange: Bool) -> [Int] {
        let luma = fullRange ? (1.0, 0.0) : (255.0 / 219.0, 16.0)
        let chroma = fullRange ? 1.0 : 255.0 / 224.0
        func fixed(_ value: Double) -> Int { Int((value * 65536).rounded()) }
        var tables = [Int](repeating: 0, count: 5 * 256)
        for value in 0..<256 {
            let c = Double(value - 128) * chroma
            tables[value] = fixed((Double(value) - luma.1) * luma.0)
            tables[256 + value] = fixed(1.402 * c)
            tables[512 + value] = fixed(-0.344136 * c)
            tables[768 + value] = fixed(-0.714136 * c)
            tables[1024 + value] = fixed(1.772 * c)
        }
        return tables
    }
}

@testable import CamrollKit
import CTurboJPEG
import Foundation
import Testing

/// Resizing without aliasing (a zone plate's fine rings filtered out, not folded into false
/// ones), exact sizes, and the chroma subsampling of every kind of JPEG camroll encodes.
@Suite struct ResizeTests {
    // MARK: A zone plate and what it should become

    /// Grey rings cos(π r² / size): their frequency rises from 0 at the centre to half a cycle a
    /// pixel (the Nyquist limit) at the middle of each side. Shrunk ×0.5, the outer half of the
    /// radius holds rings finer than the smaller picture can show.
    static func zonePlate(_ size: Int) -> RGBImage {
        var pixels = [UInt8](repeating: 0, count: size * size * 3)
        for y in 0..<size {
            for x in 0..<size {
                let dx = Double(x) + 0.5 - Double(size) / 2, dy = Double(y) + 0.5 - Double(size) / 2
                let value = UInt8((127.5 + 127.5 * cos(Double.pi * (dx * dx + dy * dy) / Double(size))).rounded())
                for c in 0..<3 { pixels[(y * size + x) * 3 + c] = value }
            }
        }
        return RGBImage(width: size, height: size, pixels: pixels)
    }

    static func toLinear(_ code: Double) -> Double {
        let v = code / 255
        return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4)
    }

    static func toCode(_ light: Double) -> Double {
        let v = min(1, max(0, light))
        return 255 * (v <= 0.0031308 ? v * 12.92 : 1.055 * pow(v, 1 / 2.4) - 0.055)
    }

    /// One side's Lanczos-3 weights, from the definition in double precision (not the C code's
    /// tables): output i's centre at (i + 0.5) · in / out, the kernel widened by the scale when
    /// shrinking, normalised over the taps inside the picture.
    static func weights(from input: Int, to output: Int) -> [[(Int, Double)]] {
        let scale = Double(input) / Double(output), stretch = max(1, scale)
        func lanczos(_ x: Double) -> Double {
            let x = abs(x)
            if x < 1e-8 { return 1 }
            if x >= 3 { return 0 }
            return 3 * sin(Double.pi * x) * sin(Double.pi * x / 3) / (Double.pi * Double.pi * x * x)
        }
        return (0..<output).map { i in
            let centre = (Double(i) + 0.5) * scale
            let taps = (0..<input).compactMap { x -> (Int, Double)? in
                let w = lanczos((Double(x) + 0.5 - centre) / stretch)
                return w == 0 ? nil : (x, w)
            }
            let sum = taps.reduce(0) { $0 + $1.1 }
            return taps.map { ($0.0, $0.1 / sum) }
        }
    }

    /// The grey picture `image` (its red channel) resampled in linear light by the definition:
    /// sRGB codes, unrounded.
    static func reference(_ image: RGBImage, width: Int, height: Int) -> [Double] {
        let columns = weights(from: image.width, to: width), rows = weights(from: image.height, to: height)
        var across = [Double](repeating: 0, count: image.height * width)
        for y in 0..<image.height {
            for x in 0..<width {
                across[y * width + x] = columns[x].reduce(0) { $0 + $1.1 * toLinear(Double(image.pixels[(y * image.width + $1.0) * 3])) }
            }
        }
        var out = [Double](repeating: 0, count: width * height)
        for y in 0..<height {
            for x in 0..<width { out[y * width + x] = toCode(rows[y].reduce(0) { $0 + $1.1 * across[$1.0 * width + x] }) }
        }
        return out
    }

    /// The mean SSIM of two grey pictures over 7x7 windows (uniform weights, as scikit-image's
    /// default), data range 255.
    static func ssim(_ a: [Double], _ b: [Double], width: Int, height: Int) -> Double {
        let c1 = (0.01 * 255.0) * (0.01 * 255.0), c2 = (0.03 * 255.0) * (0.03 * 255.0), n = 49.0
        var total = 0.0, windows = 0
        for y in 0...(height - 7) {
            for x in 0...(width - 7) {
                var sa = 0.0, sb = 0.0, saa = 0.0, sbb = 0.0, sab = 0.0
                for j in y..<(y + 7) {
                    for i in x..<(x + 7) {
                        let p = a[j * width + i], q = b[j * width + i]
                        sa += p; sb += q; saa += p * p; sbb += q * q; sab += p * q
                    }
                }
                let ma = sa / n, mb = sb / n
                // Sample (co)variances, as scikit-image computes them.
                let va = (saa - n * ma * ma) / (n - 1), vb = (sbb - n * mb * mb) / (n - 1), cov = (sab - n * ma * mb) / (n - 1)
                total += (2 * ma * mb + c1) * (2 * cov + c2) / ((ma * ma + mb * mb + c1) * (va + vb + c2))
                windows += 1
            }
        }
        return total / Double(windows)
    }

    /// The red channel of an RGB picture, as doubles.
    static func grey(_ rgb: [UInt8]) -> [Double] { stride(from: 0, to: rgb.count, by: 3).map { Double(rgb[$0]) } }

    /// What is left of a ×0.5 shrink of `zonePlate(size)` that the reference has not, where the
    /// output must hold no rings of the source's: the RMS difference from the reference in the
    /// ring whose source frequency is 0.35 to 0.5 cycles a pixel (0.7 to 1 cycle an output pixel,
    /// above the output's limit of 0.5), inside the picture. (Not the plain spread of the codes
    /// there: in linear light the rings' harmonics fold into coarser ones, the reference's too.)
    static func aliasing(_ grey: [Double], reference: [Double], outputSize: Int) -> (rms: Double, mean: Double) {
        let centre = Double(outputSize) / 2
        var sum = 0.0, total = 0.0, count = 0
        for y in 0..<outputSize {
            for x in 0..<outputSize {
                let dx = Double(x) + 0.5 - centre, dy = Double(y) + 0.5 - centre
                // r output pixels are 2r source pixels, whose rings have 2r / size cycles a pixel.
                let frequency = 2 * (dx * dx + dy * dy).squareRoot() / Double(2 * outputSize)
                guard frequency >= 0.35 && frequency <= 0.5 else { continue }
                let difference = grey[y * outputSize + x] - reference[y * outputSize + x]
                sum += difference * difference
                total += grey[y * outputSize + x]
                count += 1
            }
        }
        return ((sum / Double(count)).squareRoot(), total / Double(count))
    }

    @Test func aZonePlateShrunkByHalfKeepsItsFineRingsOut() throws {
        let plate = Self.zonePlate(256)
        let resized = try plate.resized(to: Resolution(width: 128, height: 128))
        #expect(resized.width == 128 && resized.height == 128 && resized.pixels.count == 128 * 128 * 3)
        let reference = Self.reference(plate, width: 128, height: 128)
        let ours = Self.grey(resized.pixels)
        #expect(Self.ssim(ours, reference, width: 128, height: 128) > 0.99)
        // Every second pixel kept (no filter at all) folds those rings into strong false ones:
        // the measure tells the two apart.
        let decimated = (0..<128).flatMap { y in (0..<128).map { x in Double(plate.pixels[(2 * y * 256 + 2 * x) * 3]) } }
        let unfiltered = Self.aliasing(decimated, reference: reference, outputSize: 128)
        let filtered = Self.aliasing(ours, reference: reference, outputSize: 128)
        #expect(unfiltered.rms > 40, "\(unfiltered)")
        #expect(filtered.rms < 2, "\(filtered)")
        // Linear light: where the rings are too fine to keep, full contrast averages to half the
        // light (sRGB code 188 where they are gone altogether), not the codes' mean 128 (what averaging
        // the codes gives).
        #expect(filtered.mean > 150 && filtered.mean < 205, "\(filtered)")
    }

    /// Sizes that do not divide: the output is exactly as asked, every channel filled, a flat
    /// picture stays flat (the weights sum to 1, the edges included).
    @Test func oddSizesAreExactAndAFlatPictureStaysFlat() throws {
        let flat = RGBImage(width: 101, height: 37, pixels: (0..<(101 * 37)).flatMap { _ in [200, 30, 90] as [UInt8] })
        for size in [Resolution(width: 13, height: 7), Resolution(width: 100, height: 1), Resolution(width: 1, height: 36),
                     Resolution(width: 250, height: 80)] {
            let out = try flat.resized(to: size)
            #expect(out.width == size.width && out.height == size.height && out.pixels.count == size.width * size.height * 3)
            for pixel in 0..<(size.width * size.height) {
                #expect(out.pixels[pixel * 3] == 200 && out.pixels[pixel * 3 + 1] == 30 && out.pixels[pixel * 3 + 2] == 90,
                        "\(size) pixel \(pixel): \(out.pixels[pixel * 3..<pixel * 3 + 3])")
                if out.pixels[pixel * 3] != 200 { break }
            }
        }
    }

    /// The whole path a user takes: a zone plate JPEG, `-d file: -r`, the saved JPEG decoded.
    /// Decoded at a smaller DCT scale first (as camroll did), the same shrink aliases: the
    /// reference tells them apart.
    @Test func aZonePlateFileResizedByCamrollMatchesTheReference() throws {
        let dir = try TemporaryDirectory()
        let plate = Self.zonePlate(256)
        let source = try JPEGEncoder().encode(plate.frame, quality: 95, subsampling: .s444).bytes
        try Data(source).write(to: URL(fileURLWithPath: dir.file("zone.jpg")))
        let result = try CamrollBinary.run(["-d", "file:" + dir.file("zone.jpg"), "-r", "128x128", "-q", "95",
                                            "-o", dir.file("half.jpg"), "--db", dir.file("c.db")])
        #expect(result.status == 0, "\(result.stderr)")
        let (header, pixels) = try JPEGDecoder().decodeRGB(try fileBytes(dir.file("half.jpg")))
        #expect(header.width == 128 && header.height == 128)
        let reference = Self.reference(RGBImage(width: 256, height: 256, pixels: try JPEGDecoder().decodeRGB(source).1),
                                       width: 128, height: 128)
        let score = Self.ssim(Self.grey(pixels), reference, width: 128, height: 128)
        #expect(score > 0.97, "\(score)")
        let (_, dctHalf) = try JPEGDecoder().decodeRGB(source, minimumWidth: 128, minimumHeight: 128)
        #expect(dctHalf.count == 128 * 128 * 3)
        #expect(Self.ssim(Self.grey(dctHalf), reference, width: 128, height: 128) < 0.9)
    }

    // MARK: Chroma subsampling

    static func subsampling(_ path: String) throws -> ChromaSubsampling? {
        try JPEGDecoder().subsampling(of: fileBytes(path))
    }

    /// A 4:2:0 and a 4:4:4 JPEG of a colour picture (camroll's pattern, through RGB).
    static func photoFiles(in dir: TemporaryDirectory) throws -> (s420: String, s444: String) {
        let made = try CamrollBinary.run(["-d", "pattern", "-r", "320x240", "-o", dir.file("yuyv.jpg"), "--db", dir.file("make.db")])
        #expect(made.status == 0, "\(made.stderr)")
        let (_, rgb) = try JPEGDecoder().decodeRGB(try fileBytes(dir.file("yuyv.jpg")))
        let frame = RGBImage(width: 320, height: 240, pixels: rgb).frame
        let encoder = try JPEGEncoder()
        try Data(try encoder.encode(frame, quality: 90, subsampling: .s420).bytes).write(to: URL(fileURLWithPath: dir.file("420.jpg")))
        try Data(try encoder.encode(frame, quality: 90, subsampling: .s444).bytes).write(to: URL(fileURLWithPath: dir.file("444.jpg")))
        return (dir.file("420.jpg"), dir.file("444.jpg"))
    }

    /// Each kind of source, with and without `--subsampling`: what tjDecompressHeader3 reads in
    /// the saved file.
    @Test func everySourceKeepsItsOwnSubsamplingUnlessAskedOtherwise() throws {
        let dir = try TemporaryDirectory()
        let files = try Self.photoFiles(in: dir)
        let png = dir.file("p.png")
        #expect(try CamrollBinary.run(["-d", "pattern", "-r", "64x48", "-o", png, "--db", dir.file("c.db")]).status == 0)
        #expect(try Self.subsampling(files.s420) == .s420 && Self.subsampling(files.s444) == .s444)
        let cases: [(arguments: [String], expected: ChromaSubsampling)] = [
            (["-d", "pattern", "-r", "64x48"], .s422),                              // YUYV: 4:2:2, as it is
            (["-d", "pattern", "-r", "64x48", "--subsampling", "420"], .s420),
            (["-d", "pattern", "-r", "64x48", "--subsampling", "444"], .s444),
            (["-d", "file:" + files.s444, "-r", "160x120"], .s444),                // a file re-encoded keeps its own
            (["-d", "file:" + files.s420, "-r", "160x120"], .s420),
            (["-d", "file:" + files.s420, "-q", "80"], .s420),
            (["-d", "file:" + files.s444, "-r", "160x120", "--subsampling", "422"], .s422),
            (["-d", "file:" + files.s420, "--subsampling", "444"], .s444),        // encoded again to have it
            (["-d", "file:" + png], .s444),                                        // RGB: its colour whole
            (["-d", "file:" + png, "-r", "32x24"], .s444),
            (["-d", "file:" + png, "--subsampling", "420"], .s420),
            // Asked for a small file: 4:2:0, whether or not the limit had to lower the quality.
            (["-d", "pattern", "-r", "64x48", "--max-bytes", "1M"], .s420),
            (["-d", "pattern", "-r", "320x240", "--max-bytes", "6K"], .s420),
            (["-d", "file:" + files.s444, "--max-bytes", "8K"], .s420),
            (["-d", "pattern", "-r", "64x48", "--max-bytes", "1M", "--subsampling", "444"], .s444),
        ]
        for (index, testCase) in cases.enumerated() {
            let output = dir.file("out\(index).jpg")
            let result = try CamrollBinary.run(testCase.arguments + ["-o", output, "--db", dir.file("c.db")])
            #expect(result.status == 0, "\(testCase.arguments): \(result.stderr)")
            #expect(try Self.subsampling(output) == testCase.expected, "\(testCase.arguments)")
        }
        // Asked for the subsampling it has, a photo file is still saved as it is, byte for byte.
        let same = dir.file("same.jpg")
        #expect(try CamrollBinary.run(["-d", "file:" + files.s420, "--subsampling", "420", "-o", same, "--db", dir.file("c.db")]).status == 0)
        #expect(try fileBytes(same) == fileBytes(files.s420))
    }

    /// A camera's planar 4:2:0 frames (what libv4lconvert gives) are 4:2:0 JPEGs; asked, 4:4:4.
    @Test func aYUV420FrameIsEncodedAs420UnlessAsked() throws {
        let width = 64, height = 48
        let planes = [UInt8](repeating: 100, count: width * height) + [UInt8](repeating: 90, count: width * height / 2)
        let frame = Frame(format: .yuv420, width: width, height: height, bytesPerLine: width, bytes: planes, sequence: 0,
                          capturedAt: Date())
        let decoder = try JPEGDecoder()
        let encoder = try JPEGEncoder()
        #expect(try decoder.subsampling(of: encoder.encode(frame, quality: 90).bytes) == .s420)
        #expect(try decoder.subsampling(of: encoder.encode(frame, quality: 90, subsampling: .s444).bytes) == .s444)
        #expect(try decoder.subsampling(of: encoder.encode(frame, quality: 90, subsampling: .s422).bytes) == .s422)
    }

    @Test func subsamplingParsesItsThreeValuesOnly() {
        #expect(ChromaSubsampling(parsing: "444") == .s444)
        #expect(ChromaSubsampling(parsing: "4:2:2") == .s422)
        #expect(ChromaSubsampling(parsing: "420") == .s420)
        for bad in ["411", "440", "", "grey", "4200"] { #expect(ChromaSubsampling(parsing: bad) == nil, "\(bad)") }
    }
}

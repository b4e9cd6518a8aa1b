@testable import CamrollKit
import CPixels
import CTurboJPEG
import CV4L2
import Foundation
import Testing

@Suite struct ImagingTests {
    @Test(arguments: [(1280, 720), (640, 480), (1920, 1080), (2, 1), (322, 241)])
    func patternEncodesToADecodableJPEGOfTheSameSize(width: Int, height: Int) throws {
        let pattern = TestPattern(resolution: Resolution(width: width, height: height))
        let frame = try pattern.nextFrame()
        #expect(frame.format == .yuyv)
        #expect(frame.bytes.count == width * height * 2)
        let image = try ImagePipeline(quality: 90).jpeg(from: frame)
        let (header, pixels) = try JPEGDecoder().decodeRGB(image.bytes)
        #expect(header == JPEGDecoder.Header(width: width, height: height))
        #expect(pixels.count == width * height * 3)
    }

    @Test func decodedBarsHaveTheColoursOfSeventyFivePercentBars() throws {
        let frame = try TestPattern(resolution: Resolution(width: 640, height: 480)).nextFrame()
        let image = try ImagePipeline(quality: 95).jpeg(from: frame)
        let (_, rgb) = try JPEGDecoder().decodeRGB(image.bytes)
        // Sample the middle of each bar, halfway down: 75% of 255 ≈ 191 where a channel is on.
        let expected: [(Int, Int, Int)] = [
            (191, 191, 191), (191, 191, 0), (0, 191, 191), (0, 191, 0),
            (191, 0, 191), (191, 0, 0), (0, 0, 191), (0, 0, 0),
        ]
        for (bar, colour) in expected.enumerated() {
            let x = bar * 80 + 40, y = 240
            let offset = (y * 640 + x) * 3
            let got = (Int(rgb[offset]), Int(rgb[offset + 1]), Int(rgb[offset + 2]))
            #expect(abs(got.0 - colour.0) <= 12 && abs(got.1 - colour.1) <= 12 && abs(got.2 - colour.2) <= 12,
                    "bar \(bar): got \(got), expected about \(colour)")
        }
    }

    /// A YUYV frame's thumbnail comes from the frame itself, not from decoding the JPEG: the
    /// same picture either way, at the size Thumbnail fits — also where the thumbnail is wider
    /// than half the frame (322x241 and 2x1 into the default box) and its luma is averaged
    /// pixel by pixel.
    @Test(arguments: [(1280, 720), (640, 480), (322, 241), (2, 1)])
    func aThumbnailFromTheFrameShowsWhatTheDecodedJPEGShows(width: Int, height: Int) throws {
        let frame = try TestPattern(resolution: Resolution(width: width, height: height)).nextFrame()
        let pipeline = try ImagePipeline(quality: 90, thumbnailBox: Thumbnail.defaultBox)
        let image = try pipeline.jpeg(from: frame)
        let fromPlanes = try #require(image.thumbnail)
        #expect(try pipeline.thumbnail(of: image) == fromPlanes)
        let fromJPEG = try Thumbnail.make(from: image.bytes, fitting: Thumbnail.defaultBox, encoder: JPEGEncoder())
        let (planesSize, planesRGB) = try JPEGDecoder().decodeRGB(fromPlanes)
        let (jpegSize, jpegRGB) = try JPEGDecoder().decodeRGB(fromJPEG)
        let fitted = Thumbnail.fittedSize(width, height, inside: Thumbnail.defaultBox)
        #expect(planesSize == JPEGDecoder.Header(width: fitted.width, height: fitted.height))
        #expect(planesSize == jpegSize)
        let difference = zip(planesRGB, jpegRGB).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }
        let meanDifference = Double(difference) / Double(planesRGB.count)
        // Colour bars with sharp edges, each thumbnail through its own lossy steps and scaling:
        // 3-7 levels apart on average here; a picture mixed up is ~120.
        #expect(meanDifference < 10, "mean difference \(meanDifference) levels")
        guard width == 640 else { return }
        // And the colours themselves: the middle of each 75% bar, halfway down.
        let expected: [(Int, Int, Int)] = [
            (191, 191, 191), (191, 191, 0), (0, 191, 191), (0, 191, 0),
            (191, 0, 191), (191, 0, 0), (0, 0, 191), (0, 0, 0),
        ]
        for (bar, colour) in expected.enumerated() {
            let offset = (60 * fitted.width + bar * 20 + 10) * 3
            let got = (Int(planesRGB[offset]), Int(planesRGB[offset + 1]), Int(planesRGB[offset + 2]))
            #expect(abs(got.0 - colour.0) <= 12 && abs(got.1 - colour.1) <= 12 && abs(got.2 - colour.2) <= 12,
                    "bar \(bar): got \(got), expected about \(colour)")
        }
    }

    @Test func successiveFramesDiffer() throws {
        let pattern = TestPattern(resolution: Resolution(width: 320, height: 180))
        let first = try pattern.nextFrame(), second = try pattern.nextFrame()
        #expect(first.sequence == 1 && second.sequence == 2)
        #expect(first.bytes != second.bytes)
    }

    /// `-d pattern -f mjpeg`: a camera's MJPEG mode, a loop of 30 frames encoded once, each
    /// saved as it came (passthrough); the 31st is the first's bytes again, numbered 31.
    @Test func theMJPEGPatternIsALoopOfFramesSavedAsTheyCame() throws {
        let dir = try TemporaryDirectory()
        let result = try CamrollBinary.run([
            "-d", "pattern", "-f", "mjpeg", "-r", "320x240", "--frames", "31", "--no-exif", "--quiet",
            "-o", dir.file("out/{frame}.jpg"), "--db", dir.file("c.db"),
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let first = try fileBytes(dir.file("out/01.jpg")), second = try fileBytes(dir.file("out/02.jpg"))
        #expect(try fileBytes(dir.file("out/31.jpg")) == first)
        #expect(first != second)
        #expect(try JPEGDecoder().header(of: first).width == 320)
        let catalog = try CatalogReader(dir.file("c.db"))
        #expect(try catalog.text("SELECT group_concat(DISTINCT pixel_format) FROM captures") == "MJPG")
        #expect(try catalog.int("SELECT max(frame_sequence) FROM captures") == 31)
    }

    @Test func higherQualityMakesLargerFiles() throws {
        let frame = try TestPattern(resolution: Resolution(width: 640, height: 480)).nextFrame()
        let low = try ImagePipeline(quality: 10).jpeg(from: frame)
        let high = try ImagePipeline(quality: 100).jpeg(from: frame)
        #expect(low.bytes.count < high.bytes.count)
        #expect(low.quality == 10)
    }

    @Test func aCommentSegmentLeavesTheImageIdentical() throws {
        let frame = try TestPattern(resolution: Resolution(width: 320, height: 240)).nextFrame()
        let jpeg = try ImagePipeline(quality: 90).jpeg(from: frame).bytes
        let stamped = Array(jpeg[0..<2]) + JPEGComment.segment("camroll run=x seq=7") + Array(jpeg[2...])
        let decoder = try JPEGDecoder()
        #expect(stamped != jpeg)
        #expect(try decoder.decodeRGB(stamped).1 == decoder.decodeRGB(jpeg).1)
    }

    /// `--stamp`'s comment is padded with spaces to 64 bytes (JPEGComment.stamp says why), and
    /// both readers of a stamp still find the seq in it: verify (whose copy a file holds) and
    /// repair (which save a file without a row was).
    @Test func aStampIsPaddedTo64BytesAndReadBackWithItsSeq() throws {
        let frame = try TestPattern(resolution: Resolution(width: 320, height: 240)).nextFrame()
        let jpeg = try ImagePipeline(quality: 90).jpeg(from: frame).bytes
        let run = "5f0c8a3e-6b1d-4a57-9c2e-0d8f1b7a4e93"
        let decoder = try JPEGDecoder()
        for seq in [1, 64, 123_456_789_012] {
            let stamp = JPEGComment.stamp(run: run, seq: seq)
            #expect(stamp.count % 64 == 0 && stamp.last == UInt8(ascii: " "))
            let stamped = Array(jpeg[0..<2]) + stamp + Array(jpeg[2...])
            #expect(try decoder.decodeRGB(stamped).1 == decoder.decodeRGB(jpeg).1)
            #expect(Verifier.stamps(in: stamped) == [Verifier.Stamp(runUUID: run, seq: seq, position: 0)])
            let text = String(decoding: stamp[4...], as: UTF8.self)
            #expect(JPEGComment.stampedSeq(text.dropFirst("camroll run=\(run) seq=".count)) == seq)
        }
        // Stamps written before the padding are read as they were.
        #expect(JPEGComment.stampedSeq("17") == 17)
        #expect(JPEGComment.segment("camroll run=x seq=7").count == 4 + 19)
    }

    @Test func truncatedJPEGIsRejected() throws {
        let frame = try TestPattern(resolution: Resolution(width: 320, height: 240)).nextFrame()
        let jpeg = try ImagePipeline(quality: 90).jpeg(from: frame).bytes
        #expect(throws: CamrollError.self) { try JPEGDecoder().decodeRGB(Array(jpeg.prefix(jpeg.count / 2))) }
        #expect(throws: CamrollError.self) { try JPEGDecoder().header(of: [0xFF, 0xD8, 0x00]) }
    }

    @Test func pixelFormatCodesRoundTrip() {
        #expect(PixelFormat.yuyv.code == "YUYV")
        #expect(PixelFormat.mjpeg.code == "MJPG")
        #expect(PixelFormat(code: "Y16 ")?.code == "Y16")
        #expect(PixelFormat(code: "TOOLONG") == nil)
    }
}

/// The JPEG path's pixel loops (CPixels).
@Suite struct PixelLoopTests {
    /// Limited to full range, in fixed point, is what the definition gives in floating point
    /// (rounded half away from zero, clamped), for every value.
    @Test func rangeExpansionMatchesItsDefinitionForAllValues() {
        func defined(_ value: Int, low: Int, span: Int, centre: Int?) -> UInt8 {
            let scaled = centre.map { Double($0) + Double(value - $0) * 255 / Double(span) } ?? Double(value - low) * 255 / Double(span)
            return UInt8(max(0, min(255, scaled.rounded())))
        }
        for value in 0...255 {
            #expect(cpixels_expand_luma(UInt8(value)) == defined(value, low: 16, span: 219, centre: nil), "luma \(value)")
            #expect(cpixels_expand_chroma(UInt8(value)) == defined(value, low: 16, span: 224, centre: 128), "chroma \(value)")
        }
        #expect(cpixels_expand_luma(16) == 0 && cpixels_expand_luma(235) == 255 && cpixels_expand_chroma(128) == 128)
    }

    /// A plane expanded 16 samples at a time, and the rest one by one: every value, both ways.
    @Test func planeExpansionGivesThePerSampleValues() {
        let samples = (0..<(256 * 2 + 7)).map { UInt8(truncatingIfNeeded: $0 * 7) }
        for chroma in [false, true] {
            var expanded = [UInt8](repeating: 0, count: samples.count)
            cpixels_expand_plane(samples, &expanded, samples.count, chroma ? 1 : 0)
            let wrong = zip(samples, expanded).filter { $1 != (chroma ? cpixels_expand_chroma($0) : cpixels_expand_luma($0)) }
            #expect(wrong.isEmpty, "chroma \(chroma): \(wrong.prefix(5))")
        }
    }

    /// 4:2:0 frames of odd sizes: libjpeg reads each component in whole blocks, and every strip
    /// is padded from the frame's last column and row (the fuzz target `preview` caught a read
    /// past the luma plane at 1x511 when turbojpeg read the planes whole).
    @Test(arguments: [(1, 511), (5, 3), (33, 17), (2, 2)])
    func oddSizedYUV420FramesEncode(width: Int, height: Int) throws {
        let chroma = ((width + 1) / 2) * ((height + 1) / 2)
        let bytes = (0..<(width * height + 2 * chroma)).map { UInt8(truncatingIfNeeded: $0 * 37) }
        let frame = Frame(format: .yuv420, width: width, height: height, bytesPerLine: width, bytes: bytes, sequence: 0,
                          capturedAt: Date())
        let encoded = try JPEGEncoder().encode(frame, quality: 90)
        #expect(try JPEGDecoder().decodeRGB(encoded.bytes).0 == JPEGDecoder.Header(width: width, height: height))
    }

    /// The YUV encoders (a strip of rows at a time through libjpeg) write the very bytes that
    /// turbojpeg's tjCompressFromYUVPlanes writes from whole planes, as camroll made them before
    /// (a YUYV frame split whole; a 4:2:0 one's planes expanded, its luma padded to whole pairs
    /// of columns and rows): sizes that fill no block, part of one, and many (odd heights and
    /// widths, widths not a multiple of 16, YUYV rows with padding past the pixels), both DCTs
    /// turbojpeg picks by quality, both ranges, pictures smooth and noisy. A picture of 32 rows
    /// of MCUs or more is compressed in four bands joined at restart markers (cpixels.h): its
    /// bytes are not turbojpeg's, its pixels are, decoded, every one (the same coefficients).
    @Test(arguments: [(2, 1), (6, 9), (38, 7), (322, 241), (640, 480), (1, 511), (5, 3), (33, 17), (322, 520)])
    func theYUVEncodersWriteWhatTurbojpegWritesFromWholePlanes(width: Int, height: Int) throws {
        var noise = Noise(seed: width * 1000 + height)
        let chromaWidth = (width + 1) / 2, chromaHeight = (height + 1) / 2
        let yuyvStride = width * 2 + 4
        let layouts: [PixelFormat] = width % 2 == 0 ? [.yuyv, .yuv420] : [.yuv420]
        for format in layouts {
            let count = format == .yuyv ? yuyvStride * height : width * height + 2 * chromaWidth * chromaHeight
            let smooth = (0..<count).map { UInt8(truncatingIfNeeded: 16 + ($0 / 3) % 200) }
            for (content, bytes) in [("smooth", smooth), ("noise", (0..<count).map { _ in noise.next() })] {
                for quality in [50, 90, 97] {
                    for fullRange in [false, true] {
                        let frame = Frame(format: format, width: width, height: height,
                                          bytesPerLine: format == .yuyv ? yuyvStride : width, bytes: bytes, sequence: 1,
                                          capturedAt: Date(), fullRange: fullRange)
                        let ours = try JPEGEncoder().encode(frame, quality: quality).bytes
                        let theirs = try Self.turbojpegFromWholePlanes(frame, quality: quality)
                        if let bands = Self.bands(of: frame) {
                            try Self.expectBands(bands, in: ours, decodingLike: theirs, "\(format.code) \(width)x\(height) \(content) q\(quality) full range \(fullRange)")
                            continue
                        }
                        let same = ours == theirs  // (compared apart: #expect would print both JPEGs)
                        let firstDifference = zip(ours, theirs).enumerated().first { $0.element.0 != $0.element.1 }?.offset
                        #expect(same, """
                            \(format.code) \(width)x\(height) \(content) q\(quality) full range \(fullRange): \
                            \(ours.count) and \(theirs.count) bytes, first difference at byte \
                            \(firstDifference ?? min(ours.count, theirs.count))
                            """)
                    }
                }
            }
        }
    }

    /// A banded picture's JPEG is the same, byte for byte, however many threads compress its
    /// bands: one (a one-CPU machine), two, three (one band left to the first to finish), four,
    /// eight (more threads than bands). YUYV with padding past each row's pixels, 4:2:0; sizes
    /// whose last band is shorter.
    @Test(arguments: [(PixelFormat.yuyv, 1920, 1080), (.yuyv, 322, 520), (.yuv420, 1280, 720), (.yuv420, 646, 1000)])
    func aBandedPictureIsTheSameJPEGWhateverTheThreads(format: PixelFormat, width: Int, height: Int) throws {
        var noise = Noise(seed: width + height)
        let stride = format == .yuyv ? width * 2 + 6 : width
        let count = format == .yuyv ? stride * height : width * height + 2 * ((width + 1) / 2) * ((height + 1) / 2)
        let bytes = (0..<count).map { index in index % 7 == 0 ? noise.next() : UInt8(truncatingIfNeeded: 16 + index / 5 % 200) }
        let frame = Frame(format: format, width: width, height: height, bytesPerLine: stride, bytes: bytes, sequence: 1,
                          capturedAt: Date())
        let bands = try #require(Self.bands(of: frame))
        let encoder = try #require(cpixels_jpeg_encoder_create())
        defer { cpixels_jpeg_encoder_destroy(encoder) }
        var jpegs: [[UInt8]] = []
        for threads in [1, 2, 3, 4, 8] {
            cpixels_jpeg_encoder_set_threads(encoder, Int32(threads))
            var out = [UInt8](repeating: 0, count: width * height * 4 + 4096), size = 0
            let status = format == .yuyv
                ? cpixels_jpeg_encode_yuyv(encoder, bytes, stride, Int32(width), Int32(height), 0, 90, &out, out.count, &size)
                : cpixels_jpeg_encode_i420(encoder, bytes, Int32(width), Int32(height), 0, 90, &out, out.count, &size)
            try #require(status == 0, "\(String(cString: cpixels_jpeg_encoder_error(encoder)))")
            jpegs.append(Array(out.prefix(size)))
        }
        #expect(jpegs.allSatisfy { $0 == jpegs[0] }, "sizes \(jpegs.map(\.count))")
        let theirs = try Self.turbojpegFromWholePlanes(frame, quality: 90)
        try Self.expectBands(bands, in: jpegs[0], decodingLike: theirs, "\(format.code) \(width)x\(height)")
    }

    /// How `frame` is cut into bands (cpixels.h): nil when it is compressed whole, else the
    /// restart interval (one band's MCUs) and the number of bands. Four, of rows of MCUs shared
    /// out evenly, the last band taking what is left, from 32 rows of MCUs.
    static func bands(of frame: Frame) -> (restartInterval: Int, count: Int)? {
        let mcuWidth = 16, mcuHeight = frame.format == .yuyv ? 8 : 16
        let mcuRows = (frame.height + mcuHeight - 1) / mcuHeight
        guard mcuRows >= 32 else { return nil }
        let each = (mcuRows + 3) / 4
        return (each * ((frame.width + mcuWidth - 1) / mcuWidth), (mcuRows + each - 1) / each)
    }

    /// `jpeg` holds its bands as cpixels.h says: a restart interval of one band's MCUs, the
    /// restart markers RST0, RST1, … between the bands, and no other; and it decodes (libjpeg
    /// stopping at any warning, such as a restart marker out of turn) to the very pixels of the
    /// JPEG compressed whole.
    static func expectBands(
        _ bands: (restartInterval: Int, count: Int), in jpeg: [UInt8], decodingLike whole: [UInt8], _ what: String
    ) throws {
        let interval = jpeg.indices.dropLast(5).first { jpeg[$0] == 0xFF && jpeg[$0 + 1] == 0xDD }
            .map { Int(jpeg[$0 + 4]) << 8 | Int(jpeg[$0 + 5]) }
        #expect(interval == bands.restartInterval, "\(what): restart interval \(interval ?? 0)")
        let scan = try #require(jpeg.indices.dropLast().first { jpeg[$0] == 0xFF && jpeg[$0 + 1] == 0xDA })
        let markers = (scan..<(jpeg.count - 1)).filter { jpeg[$0] == 0xFF && (0xD0...0xD7).contains(jpeg[$0 + 1]) }
            .map { jpeg[$0 + 1] }
        #expect(markers == (0..<(bands.count - 1)).map { UInt8(0xD0 + $0 % 8) }, "\(what): restart markers \(markers)")
        let (ourHeader, ourPixels) = try JPEGDecoder().decodeRGB(jpeg)
        let (theirHeader, theirPixels) = try JPEGDecoder().decodeRGB(whole)
        #expect(ourHeader == theirHeader, "\(what)")
        let samePixels = ourPixels == theirPixels  // (compared apart: #expect would print both)
        #expect(samePixels, "\(what): the pixels differ from the JPEG compressed whole")
    }

    /// A thumbnail's 4:4:4 planes (one after another) encoded through libjpeg, as the frame is,
    /// make the bytes turbojpeg's tjCompressFromYUVPlanes makes from the same planes (the range
    /// expanded first where limited), which made every thumbnail before: sizes under one block,
    /// of part of one and of many, both DCTs turbojpeg picks by quality, both ranges.
    @Test(arguments: [(1, 1), (7, 5), (33, 17), (160, 120), (320, 240)])
    func theThumbnailEncoderWritesWhatTurbojpegWrites(width: Int, height: Int) throws {
        var noise = Noise(seed: width * 1000 + height)
        let count = width * height
        let smooth = (0..<3 * count).map { UInt8(truncatingIfNeeded: 16 + ($0 / 3) % 200) }
        let encoder = try #require(cpixels_jpeg_encoder_create())
        defer { cpixels_jpeg_encoder_destroy(encoder) }
        for (content, planes) in [("smooth", smooth), ("noise", (0..<3 * count).map { _ in noise.next() })] {
            for quality in [Thumbnail.quality, 90, 97] {
                for fullRange in [false, true] {
                    var ours = [UInt8](repeating: 0, count: 4 * count + 4096), size = 0
                    let status = cpixels_jpeg_encode_yuv444(encoder, planes, Int32(width), Int32(height), fullRange ? 1 : 0,
                                                            Int32(quality), &ours, ours.count, &size)
                    try #require(status == 0, "\(String(cString: cpixels_jpeg_encoder_error(encoder)))")
                    ours.removeSubrange(size...)
                    let expanded = fullRange ? planes : planes.enumerated().map { index, sample in
                        index < count ? cpixels_expand_luma(sample) : cpixels_expand_chroma(sample)
                    }
                    let theirs = try Self.turbojpeg(
                        Array(expanded[..<count]), Array(expanded[count..<2 * count]), Array(expanded[(2 * count)...]),
                        strides: [Int32(width), Int32(width), Int32(width)], width: width, height: height,
                        subsampling: TJSAMP_444, quality: quality)
                    let same = ours == theirs  // (compared apart: #expect would print both JPEGs)
                    #expect(same, "\(width)x\(height) \(content) q\(quality) full range \(fullRange): \(ours.count) and \(theirs.count) bytes")
                }
            }
        }
    }

    /// A failure inside libjpeg (here: the JPEG does not fit in the buffer given) comes back as
    /// -1 and libjpeg's message, not as the end of the process libjpeg's own handler makes it;
    /// the encoder works again for the next frame. The same for a picture compressed in bands.
    @Test func theYUYVEncoderReportsAFailureAndRecovers() throws {
        let frame = try TestPattern(resolution: Resolution(width: 64, height: 48)).nextFrame()
        let encoder = try #require(cpixels_jpeg_encoder_create())
        defer { cpixels_jpeg_encoder_destroy(encoder) }
        var out = [UInt8](repeating: 0, count: 64 * 48 * 4)
        var size = 0
        let tooSmall = cpixels_jpeg_encode_yuyv(encoder, frame.bytes, 128, 64, 48, 0, 90, &out, 100, &size)
        #expect(tooSmall == -1)
        #expect(String(cString: cpixels_jpeg_encoder_error(encoder)).contains("Suspension not allowed"))
        let fits = cpixels_jpeg_encode_yuyv(encoder, frame.bytes, 128, 64, 48, 0, 90, &out, out.count, &size)
        #expect(fits == 0 && size > 100)
        let expected = try JPEGEncoder().encode(frame, quality: 90).bytes
        #expect(Array(out.prefix(size)) == expected)

        // A picture compressed in bands: its bands fit their own buffers, and the whole does
        // not fit in the one given.
        let large = try TestPattern(resolution: Resolution(width: 640, height: 480)).nextFrame()
        var largeOut = [UInt8](repeating: 0, count: 640 * 480 * 4)
        let bandsTooLarge = cpixels_jpeg_encode_yuyv(encoder, large.bytes, 1280, 640, 480, 0, 90, &largeOut, 2000, &size)
        #expect(bandsTooLarge == -1)
        #expect(String(cString: cpixels_jpeg_encoder_error(encoder)) == "the JPEG does not fit in 2000 bytes")
        let bandsFit = cpixels_jpeg_encode_yuyv(encoder, large.bytes, 1280, 640, 480, 0, 90, &largeOut, largeOut.count, &size)
        #expect(bandsFit == 0)
        #expect(Array(largeOut.prefix(size)) == (try JPEGEncoder().encode(large, quality: 90).bytes))
    }

    /// The JPEG of `frame` (YUYV or 4:2:0) through tjCompressFromYUVPlanes of its whole planes.
    static func turbojpegFromWholePlanes(_ frame: Frame, quality: Int) throws -> [UInt8] {
        let width = frame.width, height = frame.height, range: Int32 = frame.fullRange ? 1 : 0
        var luma: [UInt8], cb: [UInt8], cr: [UInt8], strides: [Int32], subsampling: TJSAMP
        if frame.format == .yuyv {
            luma = [UInt8](repeating: 0, count: width * height)
            cb = [UInt8](repeating: 0, count: width / 2 * height)
            cr = cb
            cpixels_yuyv_split(frame.bytes, frame.bytesPerLine, Int32(width), Int32(height), &luma, width, &cb, &cr, width / 2, range)
            (strides, subsampling) = ([Int32(width), Int32(width / 2), Int32(width / 2)], TJSAMP_422)
        } else {
            let chromaWidth = (width + 1) / 2, chromaSize = chromaWidth * ((height + 1) / 2)
            func plane(at start: Int, count: Int, chroma: Bool) -> [UInt8] {
                let samples = Array(frame.bytes[start..<(start + count)])
                return frame.fullRange ? samples : samples.map { chroma ? cpixels_expand_chroma($0) : cpixels_expand_luma($0) }
            }
            luma = plane(at: 0, count: width * height, chroma: false)
            cb = plane(at: width * height, count: chromaSize, chroma: true)
            cr = plane(at: width * height + chromaSize, count: chromaSize, chroma: true)
            // turbojpeg reads 4:2:0 luma in whole pairs of columns and rows: padded, the last
            // column and row repeated.
            let paddedWidth = width + width % 2, paddedHeight = height + height % 2
            luma = (0..<(paddedWidth * paddedHeight)).map { index in
                luma[min(index / paddedWidth, height - 1) * width + min(index % paddedWidth, width - 1)]
            }
            (strides, subsampling) = ([Int32(paddedWidth), Int32(chromaWidth), Int32(chromaWidth)], TJSAMP_420)
        }
        return try turbojpeg(luma, cb, cr, strides: strides, width: width, height: height, subsampling: subsampling,
                             quality: quality)
    }

    /// turbojpeg's tjCompressFromYUVPlanes of three whole planes, in full range.
    static func turbojpeg(
        _ luma: [UInt8], _ cb: [UInt8], _ cr: [UInt8], strides: [Int32], width: Int, height: Int, subsampling: TJSAMP,
        quality: Int
    ) throws -> [UInt8] {
        let handle = try #require(tjInitCompress())
        defer { tjDestroy(handle) }
        var output: UnsafeMutablePointer<UInt8>? = nil
        var size: UInt = 0
        defer { tjFree(output) }
        var strides = strides
        let status = luma.withUnsafeBufferPointer { y in
            cb.withUnsafeBufferPointer { u in
                cr.withUnsafeBufferPointer { v in
                    var planes: [UnsafePointer<UInt8>?] = [y.baseAddress, u.baseAddress, v.baseAddress]
                    return tjCompressFromYUVPlanes(handle, &planes, Int32(width), &strides, Int32(height),
                                                   Int32(subsampling.rawValue), &output, &size, Int32(quality), 0)
                }
            }
        }
        #expect(status == 0, "\(String(cString: tjGetErrorStr2(handle)))")
        return Array(UnsafeBufferPointer(start: output, count: Int(size)))
    }

    /// The thumbnail's averaging: every output sample the floor of the mean of its block, as a
    /// plain loop works it out — blocks that tile the picture evenly and unevenly, blocks taller
    /// than the 257 rows the 16-bit sums hold (300 here), blocks of more than the 65536 samples
    /// a reciprocal divides exactly (350x300), a picture smaller than its output (blocks of one
    /// pixel), rows with padding past the pixels, 1 to 4 channels; noise, and noise near white
    /// (sums near their largest).
    @Test(arguments: [(97, 301, 4, 13, 29), (640, 480, 1, 160, 120), (5, 3, 3, 7, 9), (3, 600, 2, 2, 2),
                      (1, 1, 1, 1, 1), (322, 241, 3, 160, 120), (700, 300, 1, 2, 1), (320, 480, 4, 160, 120)],
          [0, 0xF0])
    func boxAveragingGivesEachBlocksMean(size: (Int, Int, Int, Int, Int), brightness: UInt8) {
        let (width, height, channels, toWidth, toHeight) = size
        let stride = width * channels + 3
        var noise = Noise(seed: width * 7 + height)
        let samples = (0..<(stride * height)).map { _ in noise.next() | brightness }
        var got = [UInt8](repeating: 0, count: toWidth * toHeight * channels)
        #expect(cpixels_box_average(samples, stride, Int32(width), Int32(height), Int32(channels), &got,
                                    Int32(toWidth), Int32(toHeight)) == 0)
        var wrong = 0
        for y in 0..<toHeight {
            let y0 = y * height / toHeight, y1 = max((y + 1) * height / toHeight, y0 + 1)
            for x in 0..<toWidth {
                let x0 = x * width / toWidth, x1 = max((x + 1) * width / toWidth, x0 + 1)
                for c in 0..<channels {
                    var sum = 0
                    for sy in y0..<y1 {
                        for sx in x0..<x1 { sum += Int(samples[sy * stride + sx * channels + c]) }
                    }
                    if Int(got[(y * toWidth + x) * channels + c]) != sum / ((y1 - y0) * (x1 - x0)) { wrong += 1 }
                }
            }
        }
        #expect(wrong == 0)
    }

    /// Each block's mean exactly where it is a whole number and where it is one short of one
    /// (every sample 200, then one in each block 199), the two cases a divide by multiplication
    /// gets wrong first: in blocks of 9 samples (multiplied by a reciprocal) and of 105 000
    /// (divided).
    @Test(arguments: [(9, 9, 3, 3), (700, 300, 2, 1)])
    func boxAveragingFloorsMeansAtAndJustUnderWholeValues(size: (Int, Int, Int, Int)) {
        let (width, height, toWidth, toHeight) = size
        var samples = [UInt8](repeating: 200, count: width * height)
        var got = [UInt8](repeating: 0, count: toWidth * toHeight)
        #expect(cpixels_box_average(samples, width, Int32(width), Int32(height), 1, &got, Int32(toWidth), Int32(toHeight)) == 0)
        #expect(got == [UInt8](repeating: 200, count: toWidth * toHeight))
        for y in 0..<toHeight {
            for x in 0..<toWidth { samples[y * height / toHeight * width + x * width / toWidth] = 199 }
        }
        #expect(cpixels_box_average(samples, width, Int32(width), Int32(height), 1, &got, Int32(toWidth), Int32(toHeight)) == 0)
        #expect(got == [UInt8](repeating: 199, count: toWidth * toHeight))
    }

    /// YUYV rows (with padding past the pixels) into the three planes, expanded or as they are:
    /// widths where only the per-pixel tail runs (6), the 16-pixel vector loop and a tail (38),
    /// and a whole row of the vector loop (640) in which every byte value comes as Y, Cb and Cr.
    @Test(arguments: [6, 38, 640])
    func yuyvSplitsIntoPlanesRowByRow(width: Int) {
        let height = 2, stride = width * 2 + 6
        var yuyv = [UInt8](repeating: 0xEE, count: stride * height)
        for row in 0..<height {
            for x in 0..<(width * 2) { yuyv[row * stride + x] = UInt8(truncatingIfNeeded: x / 4 + 64 * row + 97 * (x % 4)) }
        }
        var seen: (luma: Set<UInt8>, cb: Set<UInt8>, cr: Set<UInt8>) = ([], [], [])
        for fullRange in [true, false] {
            var luma = [UInt8](repeating: 0, count: width * height)
            var cb = [UInt8](repeating: 0, count: width / 2 * height), cr = cb
            cpixels_yuyv_split(yuyv, stride, Int32(width), Int32(height), &luma, width, &cb, &cr, width / 2, fullRange ? 1 : 0)
            let expectLuma = { (value: UInt8) in fullRange ? value : cpixels_expand_luma(value) }
            let expectChroma = { (value: UInt8) in fullRange ? value : cpixels_expand_chroma(value) }
            var wrong = 0
            for row in 0..<height {
                for pair in 0..<(width / 2) {
                    let at = row * stride + pair * 4
                    if luma[row * width + 2 * pair] != expectLuma(yuyv[at]) { wrong += 1 }
                    if luma[row * width + 2 * pair + 1] != expectLuma(yuyv[at + 2]) { wrong += 1 }
                    if cb[row * width / 2 + pair] != expectChroma(yuyv[at + 1]) { wrong += 1 }
                    if cr[row * width / 2 + pair] != expectChroma(yuyv[at + 3]) { wrong += 1 }
                    seen.luma.formUnion([yuyv[at], yuyv[at + 2]])
                    seen.cb.insert(yuyv[at + 1])
                    seen.cr.insert(yuyv[at + 3])
                }
            }
            #expect(wrong == 0, "width \(width), full range \(fullRange)")
        }
        if width == 640 { #expect(seen.luma.count == 256 && seen.cb.count == 256 && seen.cr.count == 256) }
    }
}

@Suite struct MJPEGFrameTests {
    /// A JPEG as libjpeg-turbo writes it, and the same without its DHT segments (as UVC sends).
    func frames() throws -> (withTables: [UInt8], withoutTables: [UInt8]) {
        let frame = try TestPattern(resolution: Resolution(width: 320, height: 240)).nextFrame()
        let jpeg = try JPEGEncoder().encode(frame, quality: 80).bytes
        var stripped: [UInt8] = [0xFF, 0xD8]
        var offset = 2
        while jpeg[offset + 1] != 0xDA {
            let length = Int(jpeg[offset + 2]) << 8 | Int(jpeg[offset + 3])
            if jpeg[offset + 1] != 0xC4 { stripped += jpeg[offset..<(offset + 2 + length)] }
            offset += 2 + length
        }
        stripped += jpeg[offset...]
        return (jpeg, stripped)
    }

    @Test func framesWithTablesPassThroughUnchanged() throws {
        let (jpeg, _) = try frames()
        #expect(try MJPEGFrame.jpeg(from: jpeg) == jpeg)
    }

    @Test func theStandardTablesAreInsertedWhereTheFrameHasNone() throws {
        let (jpeg, stripped) = try frames()
        #expect(stripped.count == jpeg.count - MJPEGFrame.standardHuffmanTables.count)
        #expect(try MJPEGFrame.jpeg(from: stripped) == jpeg)
        // Four DHT segments (marker, length, class/id), two DC tables (16 counts + 12 symbols) and
        // two AC tables (16 + 162): Annex K.3.
        #expect(MJPEGFrame.standardHuffmanTables.count == 4 * 5 + 2 * (16 + 12) + 2 * (16 + 162))
    }

    @Test func paddingAfterTheEndIsTrimmed() throws {
        let (jpeg, _) = try frames()
        #expect(try MJPEGFrame.jpeg(from: jpeg + [UInt8](repeating: 0, count: 4096)) == jpeg)
    }

    @Test func brokenFramesAreRefused() throws {
        let (jpeg, _) = try frames()
        #expect(throws: MJPEGFrame.Problem.noEndOfImage) { try MJPEGFrame.jpeg(from: Array(jpeg.prefix(jpeg.count / 2))) }
        #expect(throws: MJPEGFrame.Problem.noStartOfImage) { try MJPEGFrame.jpeg(from: Array(jpeg.dropFirst(2))) }
        var garbled = jpeg
        garbled[2] = 0x00
        #expect(throws: MJPEGFrame.Problem.self) { try MJPEGFrame.jpeg(from: garbled) }
    }
}

@Suite struct TerminalPictureTests {
    /// Drawn by libchafa as colour symbols: one line per cell row, in the picture's colours.
    @Test func symbolsDrawOneLinePerRowInThePicturesColours() throws {
        let frame = try TestPattern(resolution: Resolution(width: 64, height: 32)).nextFrame()
        let painter = try TerminalPainter(
            requested: .symbols, environment: ["TERM": "xterm-256color", "COLORTERM": "truecolor"], color: true)
        let cells = painter.fit(width: 64, height: 32, columns: 16, rows: 100, cell: nil)
        #expect(cells.columns == 16 && cells.rows == 4)  // 2:1 picture, cells twice as high as wide
        let image = try PreviewScaler().picture(of: frame, width: 64, height: 32)
        let text = String(decoding: painter.draw(image, columns: 16, rows: 4, cell: nil), as: UTF8.self)
        let lines = text.split(separator: "\n")
        #expect(lines.count == 4)
        // The first bar is 75% white: (180…200) grey in 24-bit colour.
        #expect(text.contains("\u{1B}[38;2;19") || text.contains("\u{1B}[48;2;19") || text.contains(";2;18"))
        // Without colour: the same shapes, no colour sequences.
        let plain = try TerminalPainter(requested: nil, environment: ["TERM": "xterm-256color"], color: false)
        let monochrome = String(decoding: plain.draw(image, columns: 16, rows: 4, cell: nil), as: UTF8.self)
        #expect(!monochrome.contains("38;2;") && !monochrome.contains("38;5;"))
        #expect(plain.mode == .symbols)
    }

    /// A live frame in colour: every cell an upper half block, its foreground the mean colour
    /// under its top half, its background the bottom half's.
    @Test func liveSymbolsAreHalfBlocksInTheMeanColoursOfEachHalf() throws {
        let painter = try TerminalPainter(
            requested: .symbols, environment: ["TERM": "xterm-256color", "COLORTERM": "truecolor"], color: true)
        painter.live = true
        // 4x4 pixels for 2x1 cells: top rows red and dark red (mean 200,0,0), bottom rows blue.
        var pixels = [UInt8]()
        for row in 0..<4 {
            for _ in 0..<4 { pixels += row == 0 ? [250, 0, 0] : row == 1 ? [150, 0, 0] : [0, 0, 255] }
        }
        #expect(painter.pixelsWanted(columns: 2, rows: 1, cell: nil) == (2, 2))
        let text = String(decoding: painter.draw(RGBImage(width: 4, height: 4, pixels: pixels), columns: 2, rows: 1, cell: nil),
                          as: UTF8.self)
        #expect(text.contains("38;2;200;0;0"), "\(text.debugDescription)")
        #expect(text.contains("48;2;0;0;255"), "\(text.debugDescription)")
        #expect(text.filter { $0 == "▀" }.count == 2)
        // The shot held for review: chafa's own symbol matching again, not half blocks.
        painter.live = false
        let still = String(decoding: painter.draw(RGBImage(width: 4, height: 4, pixels: pixels), columns: 2, rows: 1, cell: nil),
                           as: UTF8.self)
        #expect(!still.contains("38;2;200;0;0;48;2;0;0;255m▀▀"))
    }

    /// A live image (kitty) is sent small and scaled by the terminal into the same cells; a
    /// still one at the terminal's own pixels.
    @Test func liveImagesAreSentAtAFractionOfTheTerminalsPixels() throws {
        let painter = try TerminalPainter(requested: .kitty, environment: ["TERM": "xterm-kitty"], color: true)
        let image = RGBImage(width: 64, height: 32, pixels: [UInt8](repeating: 90, count: 64 * 32 * 3))
        let still = String(decoding: painter.draw(image, columns: 160, rows: 40, cell: (10, 20)), as: UTF8.self)
        #expect(still.contains("s=1600,v=800"), "\(still.prefix(60).debugDescription)")
        painter.live = true
        #expect(painter.pixelsWanted(columns: 160, rows: 40, cell: (10, 20)) == (320, 160))
        let live = String(decoding: painter.draw(image, columns: 160, rows: 40, cell: (10, 20)), as: UTF8.self)
        #expect(live.contains("s=320,v=160") && live.contains("c=160,r=40"), "\(live.prefix(60).debugDescription)")
        #expect(live.utf8.count * 20 < still.utf8.count)
        // Sixels are shown at their own size: live or not, the terminal's pixels.
        let sixel = try TerminalPainter(requested: .sixel, environment: ["TERM": "mlterm"], color: true, drawsSixels: { true })
        sixel.live = true
        #expect(sixel.pixelsWanted(columns: 160, rows: 40, cell: (10, 20)) == (1600, 800))
    }

    @Test func theTerminalDecidesTheModeUnlessOneIsAskedFor() throws {
        #expect(try TerminalPainter(requested: nil, environment: ["TERM": "xterm-kitty"], color: true).mode == .kitty)
        #expect(try TerminalPainter(requested: nil, environment: ["TERM": "mlterm"], color: true, drawsSixels: { true }).mode == .sixel)
        #expect(try TerminalPainter(requested: nil, environment: ["TERM": "xterm-256color"], color: true).mode == .symbols)
        #expect(try TerminalPainter(requested: .sixel, environment: ["TERM": "xterm-256color"], color: true, drawsSixels: { true }).mode == .sixel)
        // A terminal that does not answer that it draws sixels gets colour blocks, and is told.
        let silent = try TerminalPainter(requested: .sixel, environment: ["TERM": "mlterm"], color: true, drawsSixels: { false })
        #expect(silent.mode == .symbols && silent.note?.contains("sixels") == true)
        let painter = try TerminalPainter(requested: .kitty, environment: [:], color: true)
        let image = RGBImage(width: 8, height: 8, pixels: [UInt8](repeating: 200, count: 192))
        let kitty = String(decoding: painter.draw(image, columns: 4, rows: 2, cell: (10, 20)), as: UTF8.self)
        #expect(kitty.hasPrefix("\u{1B}_G"))
    }

    /// The preview's YUV conversion (fixed point, from tables) is BT.601 as the formula in
    /// doubles gives it, to within one level, over a grid of Y, U and V, in both ranges.
    @Test(arguments: [false, true]) func previewConversionIsBT601WithinOneLevel(fullRange: Bool) throws {
        let levels = Array(stride(from: 0, through: 255, by: 5))
        var bytes: [UInt8] = []
        var expected: [(Int, Int, Int)] = []
        let luma = fullRange ? (1.0, 0.0) : (255.0 / 219.0, 16.0)
        let chroma = fullRange ? 1.0 : 255.0 / 224.0
        func level(_ value: Double) -> Int { Int(max(0, min(255, value.rounded()))) }
        for y in levels { for u in levels { for v in levels {
            bytes += [UInt8(y), UInt8(u), UInt8(y), UInt8(v)]
            let l = (Double(y) - luma.1) * luma.0, cb = Double(u - 128) * chroma, cr = Double(v - 128) * chroma
            expected.append((level(l + 1.402 * cr), level(l - 0.344136 * cb - 0.714136 * cr), level(l + 1.772 * cb)))
        } } }
        let width = 2 * expected.count
        let frame = Frame(format: .yuyv, width: width, height: 1, bytesPerLine: width * 2, bytes: bytes, sequence: 1,
                          capturedAt: Date(), fullRange: fullRange)
        let picture = try PreviewScaler().picture(of: frame, width: width, height: 1)
        #expect(picture.width == width)
        var worst = 0
        for (index, want) in expected.enumerated() {
            let at = index * 2 * 3
            worst = max(worst, abs(Int(picture.pixels[at]) - want.0), abs(Int(picture.pixels[at + 1]) - want.1),
                        abs(Int(picture.pixels[at + 2]) - want.2))
        }
        #expect(worst <= 1, "a channel \(worst) levels from BT.601")
    }

    @Test func previewScalingSamplesYUYVAndDecodesJPEGSmall() throws {
        let frame = try TestPattern(resolution: Resolution(width: 640, height: 480)).nextFrame()
        let sampled = try PreviewScaler().picture(of: frame, width: 160, height: 120)
        #expect(sampled.width == 160 && sampled.height == 120)
        // Top left: the 75% white bar, about 191 in every channel.
        #expect(sampled.pixels[0...2].allSatisfy { (185...197).contains($0) })
        var jpeg = frame
        jpeg.bytes = try JPEGEncoder().encode(frame, quality: 90).bytes
        jpeg.format = .mjpeg
        let decoded = try PreviewScaler().picture(of: jpeg, width: 150, height: 100)
        #expect(decoded.width == 160 && decoded.height == 120)  // the 1/4 DCT scale
    }

    @Test func keysAreDecodedFromWhatTerminalsSend() {
        #expect(Key.decode(Array("\u{1B}[A\u{1B}OB\u{1B}[C\u{1B}[D".utf8)) == [.up, .down, .right, .left])
        #expect(Key.decode([0x1B]) == [.escape])
        #expect(Key.decode([0x03, 0x0D, 0x20, UInt8(ascii: "q")]) == [.interrupt, .enter, .character(" "), .character("q")])
        #expect(Key.decode([0x1A]) == [.suspend])
        #expect(Key.decode(Array("\u{1B}[15~r".utf8)) == [.character("r")])  // F5 skipped
    }

    @Test func aControlStepsInsideItsRangeOnItsGrid() {
        func control(_ kind: UInt32, _ minimum: Int64, _ maximum: Int64, step: UInt64 = 1) -> CameraControls.Control {
            CameraControls.Control(id: 1, name: "x", label: "X", type: kind, minimum: minimum, maximum: maximum, step: step,
                                   defaultValue: minimum, flags: 0, menu: [(0, "a"), (2, "c"), (3, "d")])
        }
        let integer = V4L2_CTRL_TYPE_INTEGER.rawValue
        #expect(CameraControls.stepped(control(integer, 0, 255), from: 128, direction: 1) == 140)
        #expect(CameraControls.stepped(control(integer, 0, 255), from: 250, direction: 1) == 255)
        #expect(CameraControls.stepped(control(integer, 0, 255), from: 5, direction: -1) == 0)
        #expect(CameraControls.stepped(control(integer, 1, 100, step: 3), from: 1, direction: 1) == 4)
        #expect(CameraControls.stepped(control(integer, Int64.min, Int64.max), from: Int64.max - 1, direction: 1) == Int64.max)
        #expect(CameraControls.stepped(control(V4L2_CTRL_TYPE_BOOLEAN.rawValue, 0, 1), from: 0, direction: -1) == 1)
        #expect(CameraControls.stepped(control(V4L2_CTRL_TYPE_MENU.rawValue, 0, 3), from: 0, direction: 1) == 2)
        #expect(CameraControls.stepped(control(V4L2_CTRL_TYPE_MENU.rawValue, 0, 3), from: 3, direction: 1) == 3)
    }

    @Test func aControlValueIsCheckedAgainstItsRangeAndStep() throws {
        func control(_ minimum: Int64, _ maximum: Int64, step: UInt64) -> CameraControls.Control {
            CameraControls.Control(id: 1, name: "x", label: "X", type: V4L2_CTRL_TYPE_INTEGER64.rawValue, minimum: minimum,
                                   maximum: maximum, step: step, defaultValue: minimum, flags: 0, menu: [])
        }
        func message(_ text: String, _ control: CameraControls.Control) -> String? {
            do {
                _ = try CameraControls.parse(text, for: control)
                return nil
            } catch {
                return (error as? CamrollError)?.message
            }
        }
        #expect(try CameraControls.parse("7", for: control(1, 100, step: 3)) == 7)
        #expect(message("8", control(1, 100, step: 3)) == "invalid value '8' for control 'x': range 1…100, step 3")
        // The whole 64-bit range with a step: the distance from the minimum is past Int64.max.
        let wide = control(Int64.min, Int64.max, step: 2)
        #expect(try CameraControls.parse("9223372036854775806", for: wide) == Int64.max - 1)
        #expect(message("9223372036854775807", wide)?.hasSuffix("step 2") == true)
        // A step larger than Int64.max.
        #expect(try CameraControls.parse("-9223372036854775808", for: control(Int64.min, 0, step: UInt64.max)) == Int64.min)
        // A whole number too long for 64 bits is out of the range, not "not a whole number".
        #expect(message("99999999999999999999", control(0, 255, step: 1)) == "invalid value '99999999999999999999' for control 'x': range 0…255")
        #expect(message("9.5", control(0, 255, step: 1)) == "invalid value '9.5' for control 'x': expected a whole number")
    }
}

/// Noise the same every run: a linear congruential generator's high bits.
struct Noise {
    private var state: UInt64

    init(seed: Int) { state = UInt64(seed) }

    mutating func next() -> UInt8 {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return UInt8(truncatingIfNeeded: state >> 33)
    }
}

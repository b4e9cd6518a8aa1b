@testable import CamrollKit
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

    @Test func successiveFramesDiffer() throws {
        let pattern = TestPattern(resolution: Resolution(width: 320, height: 180))
        let first = try pattern.nextFrame(), second = try pattern.nextFrame()
        #expect(first.sequence == 1 && second.sequence == 2)
        #expect(first.bytes != second.bytes)
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

@Suite struct TerminalImageTests {
    @Test func halfBlocksDrawTwoPixelRowsPerLineInTheirColours() throws {
        let frame = try TestPattern(resolution: Resolution(width: 16, height: 8)).nextFrame()
        let jpeg = try JPEGEncoder().encode(frame, quality: 95).bytes
        let text = try TerminalImage.halfBlocks(jpeg: jpeg)
        let lines = text.split(separator: "\n")
        #expect(lines.count == 4)
        #expect(lines.allSatisfy { $0.filter { $0 == "▀" }.count == 16 })
        // The first bar is 75% white: foreground and background both about (191, 191, 191).
        let first = try #require(lines.first)
        #expect(first.hasPrefix("\u{1B}[38;2;19"))
    }
}

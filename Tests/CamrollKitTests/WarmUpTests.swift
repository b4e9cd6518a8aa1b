@testable import CamrollKit
import Foundation
import Testing

/// The default warm-up: when a camera's pictures count as settled, and how bright a frame is.
/// (The camera side — frames that brighten over a second through the real v4l2loopback driver,
/// vivid's steady ones — is proven in the VM suite's `warm-up` scenario.)
@Suite struct WarmUpTests {
    /// The index of the frame on which `levels` settle, or nil.
    static func settlingFrame(_ levels: [Double]) -> Int? {
        var settling = ExposureSettling()
        return levels.firstIndex { settling.settled(afterFrameAt: $0) }
    }

    @Test func aSteadyPictureSettlesOnItsThirdFrame() {
        #expect(Self.settlingFrame([120, 120.5, 119.8, 120, 120]) == 2)
        // Sensor noise on a bright scene: a level or two is still steady.
        #expect(Self.settlingFrame([201, 203, 199.5, 202]) == 2)
    }

    /// Auto-exposure closing on its target as webcams do, by steps that shrink: the photo must
    /// not be taken while the picture is still visibly brightening.
    @Test func anExposureThatConvergesSettlesOnlyOnceItHasArrived() throws {
        let converging = (0..<40).map { 180 - 160 * pow(0.7, Double($0)) }
        let frame = try #require(Self.settlingFrame(converging))
        #expect(converging[frame] >= 0.97 * 180, "settled at \(converging[frame]) (frame \(frame))")
        #expect(converging[frame - 1] >= 0.95 * 180)
        // A steady ramp (a second of 30 frames from dark to bright), then the level holds.
        let ramp = (0..<30).map { 20 + Double($0) * 160 / 29 } + Array(repeating: 180, count: 10)
        #expect(Self.settlingFrame(ramp) == 31)
    }

    /// Near-black frames are what many sensors send while they start: they must hold longer
    /// before they are believed, and a picture that then brightens is waited for.
    @Test func nearBlackFramesMustHoldLongerBeforeTheyCount() {
        #expect(Self.settlingFrame(Array(repeating: 4, count: 20)) == 7)
        let startingSensor = [0, 0, 0, 0, 60, 110, 140, 150, 152, 152, 152] as [Double]
        #expect(Self.settlingFrame(startingSensor) == 9)
    }

    /// A picture that goes up and down by a few percent (flicker, someone moving) is not exposure
    /// still moving: it settles on its fourth frame. One that swings further, or keeps drifting
    /// one way, does not: the camera's limits end that warm-up.
    @Test func jitterSettlesButSwingsAndDriftsDoNot() {
        #expect(Self.settlingFrame((0..<100).map { $0 % 2 == 0 ? 100 : 108 }) == 3)
        #expect(Self.settlingFrame((0..<100).map { $0 % 2 == 0 ? 100 : 125 }) == nil)
        #expect(Self.settlingFrame((0..<60).map { 50 + 3 * Double($0) }) == nil)
    }

    @Test func theBrightnessOfEachFormatIsItsMeanLuma() throws {
        // YUYV with rows longer than the picture (padding the sampling must skip) and chroma
        // that differs from the luma.
        let width = 160, height = 90, rowBytes = width * 2 + 24
        var yuyv = [UInt8](repeating: 7, count: rowBytes * height)
        for y in 0..<height {
            for x in 0..<width {
                yuyv[y * rowBytes + 2 * x] = 200
                yuyv[y * rowBytes + 2 * x + 1] = x % 2 == 0 ? 30 : 240
            }
        }
        let level = yuyv.withUnsafeBytes {
            FrameBrightness.level(format: .yuyv, bytes: $0, width: width, height: height, rowBytes: rowBytes)
        }
        #expect(level == 200)

        // Planar luma: left half 50, right half 150 → 100.
        var planar = [UInt8](repeating: 128, count: width * height * 3 / 2)
        for y in 0..<height { for x in 0..<width { planar[y * width + x] = x < width / 2 ? 50 : 150 } }
        let planarLevel = try #require(planar.withUnsafeBytes {
            FrameBrightness.level(format: .yuv420, bytes: $0, width: width, height: height, rowBytes: width)
        })
        #expect(abs(planarLevel - 100) < 1)

        // Pure red is dark, pure green bright (BT.601: 0.299 and 0.587 of white).
        for (pixel, expected) in [([255, 0, 0] as [UInt8], 76.5), ([0, 255, 0], 149.7), ([255, 255, 255], 255)] {
            let rgb = Array([[UInt8]](repeating: pixel, count: 64 * 48).joined())
            let rgbLevel = try #require(rgb.withUnsafeBytes {
                FrameBrightness.level(format: .rgb24, bytes: $0, width: 64, height: 48, rowBytes: 0)
            })
            #expect(abs(rgbLevel - expected) < 1, "\(pixel): \(rgbLevel)")
        }

        // Too few bytes for the rows it claims, or a format it does not read: nil, not a crash.
        #expect(yuyv.withUnsafeBytes {
            FrameBrightness.level(format: .yuyv, bytes: UnsafeRawBufferPointer(rebasing: $0[0..<1000]), width: width, height: height,
                                  rowBytes: rowBytes)
        } == nil)
        #expect(yuyv.withUnsafeBytes { FrameBrightness.level(format: .mjpeg, bytes: $0, width: width, height: height, rowBytes: 0) } == nil)
    }

    /// An MJPEG frame's brightness from its 1/8-scale decode: that of the picture, within what
    /// the compression moves it; nil for a frame that does not decode.
    @Test(arguments: [30, 128, 220])
    func theBrightnessOfAJPEGIsThatOfItsPicture(gray: Int) throws {
        let width = 320, height = 240
        let rgb = [UInt8](repeating: UInt8(gray), count: width * height * 3)
        let frame = Frame(format: .rgb24, width: width, height: height, bytesPerLine: width * 3, bytes: rgb, sequence: 0,
                          capturedAt: Date())
        let jpeg = try JPEGEncoder().encode(frame, quality: 80).bytes
        let decoder = try JPEGDecoder()
        let level = try #require(FrameBrightness.level(ofJPEG: jpeg, decoder: decoder))
        #expect(abs(level - Double(gray)) <= 2, "\(gray): \(level)")
        #expect(FrameBrightness.level(ofJPEG: Array(jpeg[0..<(jpeg.count / 3)]), decoder: decoder) == nil)
    }
}

/// The warm-up's 1/8-scale decode of an MJPEG frame stands in for the full decode that checks a
/// photo's frame: libjpeg reads every coefficient of the scan either way (scaling happens after
/// the entropy decoding, where damage shows), so a frame one of them refuses, the other refuses.
@Suite struct ScaledDecodeCheckTests {
    @Test func aDamagedFrameFailsTheScaledDecodeExactlyWhenItFailsTheFullOne() throws {
        let frame = try TestPattern(resolution: Resolution(width: 640, height: 480)).nextFrame()
        let jpeg = try ImagePipeline(quality: 85, thumbnailBox: nil).jpeg(from: frame).bytes
        let decoder = try JPEGDecoder()
        // Where the entropy-coded data begins: after the SOS segment that follows the header's.
        let sos = try #require(JPEGSegments.headerSegments(of: jpeg).last).range.upperBound
        try #require(jpeg[sos] == 0xFF && jpeg[sos + 1] == 0xDA)
        let scanStart = sos + 2 + (Int(jpeg[sos + 2]) << 8 | Int(jpeg[sos + 3]))
        var generator = SplitMix64(seed: 0x5eed)
        var refused = 0
        for attempt in 0..<3000 {
            var damaged = jpeg
            switch attempt % 4 {
            case 0:  // a few bytes of the scan changed
                for _ in 0..<(1 + Int(generator.next() % 4)) {
                    let at = scanStart + Int(generator.next() % UInt64(jpeg.count - 2 - scanStart))
                    damaged[at] = UInt8(truncatingIfNeeded: generator.next())
                }
            case 1:  // one bit of the scan flipped: often still decodable, with other values
                let at = scanStart + Int(generator.next() % UInt64(jpeg.count - 2 - scanStart))
                damaged[at] ^= 1 << UInt8(generator.next() % 8)
            case 2:  // cut short
                damaged.removeLast(1 + Int(generator.next() % UInt64(jpeg.count - scanStart)))
            default:  // a run of the scan zeroed
                let at = scanStart + Int(generator.next() % UInt64(jpeg.count - 66 - scanStart))
                for index in at..<(at + 64) { damaged[index] = 0 }
            }
            let full = (try? decoder.decodeRGB(damaged)) != nil
            let scaled = FrameBrightness.level(ofJPEG: damaged, decoder: decoder) != nil
            #expect(full == scaled, "attempt \(attempt): the full decode \(full ? "took" : "refused") it, the 1/8 one \(scaled ? "took" : "refused") it")
            refused += full ? 0 : 1
        }
        // Both answers given often enough for the agreement to mean something (2863 refused, 137
        // taken, when written).
        #expect(refused > 1000 && refused < 2950, "\(refused) of 3000 refused")
    }
}

/// A small deterministic generator (SplitMix64), so that a failure names an attempt that repeats.
struct SplitMix64 {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

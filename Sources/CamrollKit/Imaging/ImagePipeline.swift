/// What to do to a picture besides encoding it: the options that change its pixels.
public struct ImageEdits: Sendable, Equatable {
    /// Box the picture is scaled down to fit in, aspect kept (`-r` with a file source).
    public var fit: Resolution?
    public var crop: CropRequest?
    /// Re-encode a compressed picture at the pipeline's quality (`-q` with a file source).
    public var reencode = false
    /// `--rotate`, `--flip`, `--greyscale`: after the crop (and the fit), before the EXIF.
    public var turn = ImageTurn()

    public init(fit: Resolution? = nil, crop: CropRequest? = nil, reencode: Bool = false, turn: ImageTurn = ImageTurn()) {
        self.fit = fit
        self.crop = crop
        self.reencode = reencode
        self.turn = turn
    }
}

/// Frame → JPEG: encodes raw pixel formats, passes compressed ones through untouched unless
/// asked to change them (crop — losslessly where it can —, fit, re-encode); fits a size limit
/// (`--max-bytes`); writes the EXIF block; makes the capture's thumbnail.
public final class ImagePipeline {
    public let quality: Int
    public let maxBytes: Int?
    public let thumbnailBox: Resolution?
    public let edits: ImageEdits
    /// Who took the pictures, for their EXIF; nil: no EXIF block is written (`--no-exif`).
    public let origin: PhotoOrigin?
    /// JPEG, or PNG: the same steps on the frame's pixels, none of them through a JPEG.
    public let encoding: PictureEncoding
    /// Drop the location (EXIF's GPS directory, an XMP packet that holds one): `--strip-gps`.
    public let stripGPS: Bool
    /// `--subsampling`; nil: see `subsampling(own:)`.
    public let subsampling: ChromaSubsampling?
    private let encoder: JPEGEncoder
    private let decoder: JPEGDecoder
    /// `--timestamp`, `--title`: drawn into each frame before it is encoded (ImagePipeline+Banner).
    public var banner: BannerPainter?

    public init(
        quality: Int, maxBytes: Int? = nil, thumbnailBox: Resolution? = nil, edits: ImageEdits = ImageEdits(),
        origin: PhotoOrigin? = nil, stripGPS: Bool = false, encoding: PictureEncoding = .jpeg,
        subsampling: ChromaSubsampling? = nil
    ) throws {
        self.subsampling = subsampling
        self.encoding = encoding
        self.quality = quality
        self.maxBytes = maxBytes
        self.thumbnailBox = thumbnailBox
        self.edits = edits
        self.origin = origin
        self.stripGPS = stripGPS
        self.encoder = try JPEGEncoder()
        self.decoder = try JPEGDecoder()
    }

    /// A JPEG on its way out, and what is known of the picture it came from.
    private struct Work {
        var image: EncodedImage
        /// The source's own EXIF block, the base of the one written.
        var sourceExif: [UInt8]?
        /// The Orientation to write: 1 once the pixels were turned upright; nil keeps the
        /// source's (its pixels are still stored as the source stored them).
        var orientation: Int?
        /// camroll made or changed these bytes (an untouched photo file is saved as it is).
        var changed: Bool
    }

    /// The picture to save, in the run's encoding.
    public func picture(from frame: Frame) throws -> EncodedImage {
        var frame = frame
        return try picture(drawingOn: &frame)
    }

    /// The same, any banner drawn into `frame` itself (ImagePipeline+Banner).
    public func picture(drawingOn frame: inout Frame) throws -> EncodedImage {
        try drawBanner(on: &frame)
        return encoding == .png ? try png(from: frame) : try jpeg(from: frame)
    }

    /// A PNG of the frame: its pixels (a JPEG decoded once, upright by its Orientation; YUYV
    /// and YUV 4:2:0 converted with BT.601), cropped, fitted, turned, made grey, as for a JPEG;
    /// the EXIF block, made as a JPEG's is, in an eXIf chunk. `--max-bytes` is refused before.
    func png(from frame: Frame) throws -> EncodedImage {
        var pixels: RGBImage
        var sourceExif: [UInt8]?
        switch frame.format {
        case .jpeg, .mjpeg:
            let (header, rgb) = try decoder.decodeRGB(frame.bytes)
            sourceExif = JPEGSegments.exifPayload(of: frame.bytes).map(Array.init)
            let orientation = frame.format == .jpeg ? Exif.orientation(of: frame.bytes) : 1
            pixels = try RGBImage(width: header.width, height: header.height, pixels: rgb).upright(orientation)
        case .rgb24:
            pixels = RGBImage(width: frame.width, height: frame.height, pixels: frame.bytes)
            sourceExif = frame.sourceExif
        case .yuyv, .yuv420:
            pixels = try PreviewScaler().picture(of: frame, width: frame.width, height: frame.height)
        default:
            throw CamrollError(.dataError, "cannot make a PNG of \(frame.format.code) frames")
        }
        let rect = try edits.crop?.rect(width: pixels.width, height: pixels.height)
            ?? PixelRect(x: 0, y: 0, width: pixels.width, height: pixels.height)
        if edits.crop != nil { pixels = try pixels.cropped(rect) }
        let target = fittedTarget(for: rect)
        if target.width != pixels.width || target.height != pixels.height { pixels = try pixels.resized(to: target) }
        for step in edits.turn.orientations { pixels = try pixels.upright(step) }
        if let banner { try banner.draw(on: &pixels, of: frame) }
        var samples = pixels.pixels
        var channels = 3
        if edits.turn.greyscale {
            // JPEG's luma (BT.601, full range), as libjpeg computes it.
            samples = (0..<(pixels.width * pixels.height)).map { index in
                let r = Int(pixels.pixels[index * 3]), g = Int(pixels.pixels[index * 3 + 1]), b = Int(pixels.pixels[index * 3 + 2])
                return UInt8((19595 * r + 38470 * g + 7471 * b + 32768) >> 16)
            }
            channels = 1
        }
        var tiff: ArraySlice<UInt8>?
        if let origin, let segment = Exif.segment(
            origin: origin, takenAt: frame.capturedAt, shot: frame.isShotTime, width: pixels.width, height: pixels.height,
            existing: sourceExif.map { $0[...] }, orientation: 1, pixelsChanged: true, stripGPS: stripGPS) {
            // An APP1 segment: marker, length, "Exif\0\0", then the TIFF block the eXIf chunk holds.
            tiff = segment.dropFirst(4 + JPEGSegments.exifSignature.count)
        }
        let bytes = try PNGEncoder.encode(samples, width: pixels.width, height: pixels.height, channels: channels, exif: tiff)
        var image = EncodedImage(bytes: bytes, width: pixels.width, height: pixels.height, quality: nil)
        if let thumbnailBox {
            let size = Thumbnail.fittedSize(pixels.width, pixels.height, inside: thumbnailBox)
            let small = try pixels.resized(to: size)
            image.thumbnail = try encoder.encode(small.frame, quality: Thumbnail.quality, subsampling: Thumbnail.subsampling).bytes
        }
        return image
    }

    public func jpeg(from frame: Frame) throws -> EncodedImage {
        var work: Work
        switch frame.format {
        case .jpeg, .mjpeg:
            let image = EncodedImage(bytes: frame.bytes, width: frame.width, height: frame.height, quality: nil)
            work = Work(
                image: image, sourceExif: JPEGSegments.exifPayload(of: frame.bytes).map(Array.init),
                orientation: nil, changed: false)
            let orientation = frame.format == .jpeg ? Exif.orientation(of: frame.bytes) : 1
            let own = decoder.subsampling(of: frame.bytes)
            // `--subsampling` other than the picture's own can only be had by encoding it again.
            // (A grey picture has no colour to subsample: any value is its own.)
            let otherSubsampling = subsampling != nil && subsampling != own && own?.isGrey != true
            // A turn is of the picture as shown: one stored sideways is decoded and set upright first.
            // A banner is drawn into the decoded pixels: the picture is encoded again.
            if edits.fit != nil || edits.reencode || otherSubsampling || (banner != nil && !edits.turn.movesPixels)
                || (edits.turn.movesPixels && orientation != 1) {
                work.image = try reencoded(image, orientation: orientation, subsampling: own, bannerOf: frame)
                work.orientation = 1
                work.changed = true
            } else if let crop = edits.crop {
                try cropLosslessly(&work, crop, orientation: orientation, subsampling: own)
            }
        case .rgb24 where edits.fit != nil || edits.crop != nil:
            // Decoded from a file (PNG): cropped and scaled as pixels, then encoded.
            var pixels = RGBImage(width: frame.width, height: frame.height, pixels: frame.bytes)
            let rect = try edits.crop?.rect(width: pixels.width, height: pixels.height)
                ?? PixelRect(x: 0, y: 0, width: pixels.width, height: pixels.height)
            pixels = try pixels.cropped(rect).resized(to: fittedTarget(for: rect))
            if let banner, !edits.turn.movesPixels { try banner.draw(on: &pixels, of: frame) }
            work = Work(
                image: try encoder.encode(pixels.frame, quality: quality, subsampling: subsampling(own: nil)),
                sourceExif: frame.sourceExif, orientation: frame.sourceExif == nil ? nil : 1, changed: true)
        default:
            // Uncropped, the thumbnail shows the frame as encoded: the encoder makes it from the
            // frame it has (YUYV), rather than decoding the JPEG for it afterwards.
            let image = try encoder.encode(
                frame, quality: quality, subsampling: subsampling(own: nil),
                thumbnailBox: edits.crop == nil && edits.turn.isNone ? thumbnailBox : nil)
            // A PNG's eXIf block is the base of its JPEG's, its pixels already upright.
            work = Work(image: image, sourceExif: frame.sourceExif, orientation: frame.sourceExif == nil ? nil : 1,
                        changed: true)
            if let crop = edits.crop { try cropLosslessly(&work, crop, orientation: 1, subsampling: nil) }
        }

        if !edits.turn.isNone { try turned(&work) }
        if banner != nil && edits.turn.movesPixels { try drawBannerAfterTurning(&work, frame) }
        withExif(&work, frame)
        if origin == nil || stripGPS { withoutMetadata(&work) }
        if let maxBytes, work.image.bytes.count > maxBytes {
            // Re-encoded as stored (the Orientation already decided on stays right), within
            // what the EXIF block leaves of the limit.
            let (header, rgb) = try decoder.decodeRGB(work.image.bytes)
            work.changed = true
            let segment = exifSegment(for: work, frame)
            let thumbnail = work.image.thumbnail  // the same picture, at a lower quality
            work.image = try fitting(
                RGBImage(width: header.width, height: header.height, pixels: rgb).frame,
                under: maxBytes - (segment?.count ?? 0), limit: maxBytes)
            work.image.thumbnail = thumbnail
            if let segment { work.image.bytes = JPEGSegments.replacingExif(in: work.image.bytes, with: segment) }
        }
        return work.image
    }

    /// The EXIF segment the picture gets: camroll's own JPEGs and a camera's MJPEG frames get
    /// one, an untouched photo file keeps what it has (made again without its GPS directory for
    /// `--strip-gps`).
    private func exifSegment(for work: Work, _ frame: Frame) -> [UInt8]? {
        guard let origin, work.changed || frame.format == .mjpeg || (stripGPS && work.sourceExif != nil) else { return nil }
        return Exif.segment(
            origin: origin, takenAt: frame.capturedAt, shot: frame.isShotTime, width: work.image.width,
            height: work.image.height, existing: work.sourceExif.map { $0[...] }, orientation: work.orientation,
            pixelsChanged: work.changed, stripGPS: stripGPS)
    }

    /// `--no-exif`: no APP1 at all (EXIF — and with it GPS, maker notes, the embedded thumbnail
    /// — nor XMP), whichever path the picture took, a photo file's untouched copy included.
    /// `--strip-gps`: an XMP packet that names a location goes too (EXIF's GPS directory went
    /// with the block's rewrite).
    private func withoutMetadata(_ work: inout Work) {
        let bytes = work.image.bytes
        let drop = JPEGSegments.headerSegments(of: bytes).filter { segment in
            guard segment.marker == 0xE1 else { return false }
            if origin == nil { return true }
            return JPEGSegments.isXMP(bytes, segment) && JPEGSegments.contains(bytes[segment.payload], "GPS")
        }
        guard !drop.isEmpty else { return }
        work.image.bytes = JPEGSegments.removing(drop, from: bytes)
    }

    private func withExif(_ work: inout Work, _ frame: Frame) {
        guard let segment = exifSegment(for: work, frame) else { return }
        work.image.bytes = JPEGSegments.replacingExif(in: work.image.bytes, with: segment)
    }

    /// `--rotate`, `--flip`, `--greyscale` on the JPEG made so far: on its DCT blocks where
    /// tjTransform can do it perfectly (a camera's MJPEG frame, and every common frame size:
    /// whole MCUs), else decoded, turned and encoded at `-q`. Greyscale drops the chroma
    /// losslessly either way: one component.
    private func turned(_ work: inout Work) throws {
        let turn = edits.turn
        let width = turn.swapsSides ? work.image.height : work.image.width
        let height = turn.swapsSides ? work.image.width : work.image.height
        if let lossless = try ImageTurn.lossless(work.image.bytes, turn) {
            work.image = EncodedImage(bytes: lossless, width: width, height: height, quality: work.image.quality)
        } else {
            let (header, rgb) = try decoder.decodeRGB(work.image.bytes)
            var pixels = RGBImage(width: header.width, height: header.height, pixels: rgb)
            for step in turn.orientations { pixels = try pixels.upright(step) }
            // The subsampling decided for the JPEG being turned, kept.
            var image = try encoder.encode(pixels.frame, quality: quality, subsampling: subsampling(own: decoder.subsampling(of: work.image.bytes)) ?? .s444)
            if turn.greyscale { image.bytes = try ImageTurn.greyscale(image.bytes) }
            work.image = image
        }
        if turn.movesPixels { work.orientation = 1 }
        work.changed = true
    }

    /// The subsampling of a JPEG camroll encodes: `--subsampling`; else 4:2:0 with `--max-bytes`
    /// (asked for a small file, the smallest way to store colour); else `own`, the source's (a
    /// photo file's from its header; nil: the encoder keeps the frame's, 4:2:2 for YUYV, 4:2:0
    /// for YUV 4:2:0, 4:4:4 for RGB).
    func subsampling(own: ChromaSubsampling?) -> ChromaSubsampling? {
        subsampling ?? (maxBytes != nil ? .s420 : own)
    }

    /// The banner on a picture `--rotate` or `--flip` turned (losslessly, on its JPEG): drawn
    /// upright on the turned picture, which is decoded and encoded again at `-q` for it.
    private func drawBannerAfterTurning(_ work: inout Work, _ frame: Frame) throws {
        guard let banner else { return }
        let (header, rgb) = try decoder.decodeRGB(work.image.bytes)
        var pixels = RGBImage(width: header.width, height: header.height, pixels: rgb)
        try banner.draw(on: &pixels, of: frame)
        // The subsampling decided for the turned JPEG, kept.
        var image = try encoder.encode(
            pixels.frame, quality: quality, subsampling: subsampling(own: decoder.subsampling(of: work.image.bytes)) ?? .s444)
        if edits.turn.greyscale { image.bytes = try ImageTurn.greyscale(image.bytes) }
        work.image = image
        work.changed = true
    }

    /// The size `rect` is scaled to: fitted inside `-r`'s box, never enlarged.
    private func fittedTarget(for rect: PixelRect) -> Resolution {
        guard let box = edits.fit else { return Resolution(width: rect.width, height: rect.height) }
        return Thumbnail.fittedSize(rect.width, rect.height, inside: box)
    }

    /// `--crop` on a JPEG without re-encoding it. A crop placed off the 8/16-pixel block grid
    /// cannot be lossless: that one is decoded, cropped and re-encoded.
    private func cropLosslessly(_ work: inout Work, _ crop: CropRequest, orientation: Int, subsampling own: ChromaSubsampling?) throws {
        let image = work.image
        let transposed = orientation >= 5
        let shown = transposed ? (image.height, image.width) : (image.width, image.height)
        let stored = try crop.rect(width: shown.0, height: shown.1)
            .stored(orientation: orientation, width: image.width, height: image.height)
        let aligned = LosslessCrop.aligned(stored, mcu: try LosslessCrop.mcuSize(of: image.bytes))
        if crop.isPlaced && aligned != stored {
            work.image = try reencoded(image, orientation: orientation, subsampling: own)
            work.orientation = 1
        } else {
            work.image = EncodedImage(
                bytes: try LosslessCrop.crop(image.bytes, to: aligned), width: aligned.width, height: aligned.height,
                quality: image.quality)
        }
        work.changed = true
    }

    /// Decoded at full size, turned upright, cropped, resampled to the exact size (Lanczos-3,
    /// `RGBImage.resized`), the banner drawn (of `frame`), and encoded at `-q`, with
    /// `subsampling(own:)` of the source's.
    ///
    /// Not decoded at a smaller DCT scale first, though that costs less: turbojpeg's scaled
    /// decoding aliases on its own, and no room left for the filter undoes it. A 1024x1024 zone
    /// plate shrunk to ×0.12 scored SSIM 0.87 against a float Lanczos-3 reference decoded at the
    /// smallest scale ≥ 2× the target, 0.92 at ≥ 3×, 0.92 at ≥ 4×, 0.999 decoded whole
    /// (docs/benchmarks.md, Resizing). Only when the memory this process may have cannot hold
    /// the whole picture (a 100-megapixel photo is 300 MB of RGB) is a shrink decoded at the
    /// smallest scale ≥ 4× the target instead (photos lost 0.0004-0.0023 of SSIM so), rather
    /// than refused.
    private func reencoded(
        _ image: EncodedImage, orientation: Int, subsampling own: ChromaSubsampling?, bannerOf frame: Frame? = nil
    ) throws -> EncodedImage {
        let transposed = orientation >= 5
        let shownWidth = transposed ? image.height : image.width, shownHeight = transposed ? image.width : image.height
        let rect = try edits.crop?.rect(width: shownWidth, height: shownHeight)
            ?? PixelRect(x: 0, y: 0, width: shownWidth, height: shownHeight)
        let target = fittedTarget(for: rect)
        var pixels: RGBImage
        do {
            pixels = try resampled(image, orientation: orientation, rect: rect, to: target, room: nil)
        } catch let error as CamrollError where ImageMemory.isTooLarge(error) && target.width * 4 <= rect.width
            && target.height * 4 <= rect.height {
            pixels = try resampled(image, orientation: orientation, rect: rect, to: target, room: 4)
        }
        if let banner, let frame, !edits.turn.movesPixels { try banner.draw(on: &pixels, of: frame) }
        return try encoder.encode(pixels.frame, quality: quality, subsampling: subsampling(own: own) ?? .s444)
    }

    /// `rect` of the picture as shown, resampled to `target`: decoded whole, or with `room` at
    /// the smallest DCT scale that still gives the crop `room` times the target's size.
    private func resampled(
        _ image: EncodedImage, orientation: Int, rect: PixelRect, to target: Resolution, room: Int?
    ) throws -> RGBImage {
        let transposed = orientation >= 5
        let shownWidth = transposed ? image.height : image.width, shownHeight = transposed ? image.width : image.height
        let decoded: (JPEGDecoder.Header, [UInt8])
        if let room {
            // The whole picture must decode to at least this, for the crop to hold `room` x `target`.
            let neededWidth = (shownWidth * target.width * room + rect.width - 1) / rect.width
            let neededHeight = (shownHeight * target.height * room + rect.height - 1) / rect.height
            decoded = try decoder.decodeRGB(
                image.bytes, minimumWidth: transposed ? neededHeight : neededWidth, minimumHeight: transposed ? neededWidth : neededHeight)
        } else {
            decoded = try decoder.decodeRGB(image.bytes)
        }
        let upright = try RGBImage(width: decoded.0.width, height: decoded.0.height, pixels: decoded.1).upright(orientation)
        // The crop at the decoded scale (1 when decoded whole).
        let scale = Double(upright.width) / Double(shownWidth)
        let x = min(upright.width - 1, Int(Double(rect.x) * scale))
        let y = min(upright.height - 1, Int(Double(rect.y) * scale))
        let scaledRect = PixelRect(
            x: x, y: y, width: max(1, min(upright.width - x, Int((Double(rect.width) * scale).rounded()))),
            height: max(1, min(upright.height - y, Int((Double(rect.height) * scale).rounded()))))
        return try upright.cropped(scaledRect).resized(to: target)
    }

    /// The highest quality (up to `-q`) whose JPEG fits in `limit` bytes, by binary search: size
    /// grows with quality, so about seven encodings find it.
    /// `limit` is what the user gave (for the message); `budget` what the pixels may take of it.
    private func fitting(_ frame: Frame, under budget: Int, limit: Int) throws -> EncodedImage {
        var low = 1, high = quality
        var best: EncodedImage?
        while low <= high {
            let middle = (low + high) / 2
            let candidate = try encoded(frame, quality: middle)
            if candidate.bytes.count <= budget {
                best = candidate
                low = middle + 1
            } else {
                high = middle - 1
            }
        }
        guard let best else {
            // The whole file's size, as --max-bytes counts it: the pixels and the EXIF block.
            let exif = limit - budget
            let smallest = try encoded(frame, quality: 1).bytes.count + exif
            let smaller = Thumbnail.fittedSize(frame.width, frame.height, inside: Resolution(width: frame.width / 2, height: frame.height / 2))
            throw CamrollError(
                .dataError,
                "even at quality 1 the \(frame.width)x\(frame.height) picture takes \(smallest) bytes"
                    + (exif > 0 ? " (\(exif) of them its EXIF block)" : "") + ", over --max-bytes \(limit)",
                hint: "Raise --max-bytes, or make the picture smaller with -r (e.g. -r \(smaller))"
                    + (exif > 0 ? ", or leave out the EXIF block with --no-exif." : "."))
        }
        return best
    }

    /// `frame` encoded at `quality`, one component for `--greyscale`.
    private func encoded(_ frame: Frame, quality: Int) throws -> EncodedImage {
        var image = try encoder.encode(frame, quality: quality, subsampling: subsampling ?? .s420)
        if edits.turn.greyscale { image.bytes = try ImageTurn.greyscale(image.bytes) }
        return image
    }

    /// The capture's thumbnail, or nil when thumbnails are off.
    public func thumbnail(of image: EncodedImage) throws -> [UInt8]? {
        guard let thumbnailBox else { return nil }
        if let made = image.thumbnail { return made }
        return try Thumbnail.make(from: image.bytes, fitting: thumbnailBox, encoder: encoder)
    }
}

/// Where the banner is drawn, so that it is on the picture as saved, upright, at that picture's
/// size: after `--crop`, `-r`, `--rotate` and `--flip`, as fswebcam draws it.
/// - A camera's raw frame (YUYV, YUV 4:2:0) going to a JPEG: into the frame before it is
///   encoded, only the banner's rows blended with it; with `--crop` (done losslessly on the JPEG
///   afterwards) inside the crop's rectangle.
/// - Pixels decoded or converted (a JPEG or an MJPEG frame, which is then encoded again at
///   `-q`; a PNG file; PNG output): into them once cropped and scaled.
/// - With `--rotate` or `--flip` on a JPEG: on the turned JPEG, decoded and encoded again
///   (`drawBannerAfterTurning`).
extension ImagePipeline {
    /// Draws the banner into a raw frame on its way to a JPEG, in place: a frame whose bytes
    /// no one else holds (a camera's, the pattern's) is not copied for it.
    func drawBanner(on frame: inout Frame) throws {
        guard let banner, encoding == .jpeg, !edits.turn.movesPixels else { return }
        switch frame.format {
        case .yuyv, .yuv420:
            break
        case .rgb24 where edits.fit == nil && edits.crop == nil:
            break
        default:
            return
        }
        // The region first: no copy of the frame may be alive while it is drawn on.
        let region = try croppedRegion(of: frame)
        try banner.draw(on: &frame, within: region)
        Trace.mark("banner drawn")  // Benchmarks/banner.py: the banner's cost beside the encoding's
    }

    /// The part of a raw frame `--crop` keeps, as `cropLosslessly` will cut it from the frame's
    /// JPEG: a centred crop moved onto the MCU grid of the subsampling the encoder uses for the
    /// format (YUYV 4:2:2: 16x8; YUV 4:2:0 and RGB: 16x16), a placed one exactly where asked.
    func croppedRegion(of frame: Frame) throws -> PixelRect? {
        guard let crop = edits.crop else { return nil }
        let rect = try crop.rect(width: frame.width, height: frame.height)
        if crop.isPlaced { return rect }
        return LosslessCrop.aligned(rect, mcu: frame.format == .yuyv ? (16, 8) : (16, 16))
    }

    /// The banner's text for the catalog (`captures.banner`), or nil when there is none.
    public func bannerText(for frame: Frame) -> String? {
        banner?.request.catalogText(for: frame)
    }
}

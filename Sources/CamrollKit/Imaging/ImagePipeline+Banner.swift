extension ImagePipeline {
    /// `frame` with the banner drawn in, where its pixels are raw (YUYV, YUV 4:2:0, RGB): only
    /// the banner's rows change. A JPEG or MJPEG frame is returned as it is: its banner is drawn
    /// once it is decoded (`reencoded`, `png`), so that it is encoded again at `-q`.
    func withBanner(_ frame: Frame) throws -> Frame {
        guard let banner, frame.format != .jpeg, frame.format != .mjpeg else { return frame }
        var drawn = frame
        try banner.draw(on: &drawn)
        return drawn
    }

    /// The banner's text for the catalog (`captures.banner`), or nil when there is none.
    public func bannerText(for frame: Frame) -> String? {
        banner?.request.catalogText(for: frame)
    }
}

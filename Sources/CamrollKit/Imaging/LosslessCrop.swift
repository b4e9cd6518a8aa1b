import CTurboJPEG

/// Crops a JPEG without decoding it (tjTransform works on the DCT blocks): no quality is lost,
/// every marker (EXIF included) is copied. The crop's left and top edges must fall on the
/// boundary of a block of 8 or 16 pixels (the MCU); its right and bottom edges are free.
enum LosslessCrop {
    /// MCU sizes per turbojpeg subsampling (TJSAMP_444, 422, 420, GRAY, 440, 411), as
    /// turbojpeg.h's tjMCUWidth/tjMCUHeight, which Swift cannot read.
    private static let mcuWidths = [8, 16, 16, 8, 8, 32]
    private static let mcuHeights = [8, 8, 16, 8, 16, 8]

    /// The MCU of `jpeg`: the grid that a lossless crop's top-left corner must be on.
    static func mcuSize(of jpeg: [UInt8]) throws -> (width: Int, height: Int) {
        guard let handle = tjInitTransform() else { throw CamrollError(.failure, "cannot initialise the JPEG transformer") }
        defer { tjDestroy(handle) }
        var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colorspace: Int32 = 0
        let status = jpeg.withUnsafeBufferPointer {
            tjDecompressHeader3(handle, $0.baseAddress, UInt(jpeg.count), &width, &height, &subsampling, &colorspace)
        }
        guard status == 0, (0..<mcuWidths.count).contains(Int(subsampling)) else {
            throw CamrollError(.dataError, "not a readable JPEG: \(String(cString: tjGetErrorStr2(handle)))")
        }
        return (mcuWidths[Int(subsampling)], mcuHeights[Int(subsampling)])
    }

    /// `rect` moved left and up onto the MCU grid (it stays inside the picture, being no larger).
    static func aligned(_ rect: PixelRect, mcu: (width: Int, height: Int)) -> PixelRect {
        PixelRect(x: rect.x - rect.x % mcu.width, y: rect.y - rect.y % mcu.height, width: rect.width, height: rect.height)
    }

    /// The part `rect` (on the MCU grid, in stored pixels) of `jpeg`.
    static func crop(_ jpeg: [UInt8], to rect: PixelRect) throws -> [UInt8] {
        var transform = tjtransform()
        transform.r = tjregion(x: Int32(rect.x), y: Int32(rect.y), w: Int32(rect.width), h: Int32(rect.height))
        transform.op = Int32(TJXOP_NONE.rawValue)
        transform.options = TJXOPT_CROP
        let failure = { (why: String) in CamrollError(.dataError, "cannot crop the JPEG to \(rect): \(why)") }
        guard let cropped = try apply(jpeg, transform, failure: failure) else { throw failure("no output") }
        return cropped
    }

    /// One tjTransform of `jpeg` (a crop, a turn, greyscale: ImageTurn's too). On failure,
    /// `failure` gets turbojpeg's reason and gives the error to throw, or nil where a failure is
    /// a refusal (TJXOPT_PERFECT: the turn cannot be done losslessly) and nil is returned.
    static func apply(_ jpeg: [UInt8], _ transform: tjtransform, failure: (String) -> CamrollError?) throws -> [UInt8]? {
        guard let handle = tjInitTransform() else { throw CamrollError(.failure, "cannot initialise the JPEG transformer") }
        defer { tjDestroy(handle) }
        var transform = transform
        var output: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        let status = jpeg.withUnsafeBufferPointer {
            tjTransform(handle, $0.baseAddress, UInt(jpeg.count), 1, &output, &size, &transform, 0)
        }
        defer { tjFree(output) }
        guard status == 0, let output else {
            if let error = failure(String(cString: tjGetErrorStr2(handle))) { throw error }
            return nil
        }
        return Array(UnsafeBufferPointer(start: output, count: Int(size)))
    }
}

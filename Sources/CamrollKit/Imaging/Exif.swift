import CExif
import FoundationEssentials
import Glibc

/// Where a picture came from, as EXIF tells photo managers: the camera's names and the settings
/// it reports.
public struct PhotoOrigin: Sendable, Equatable {
    /// EXIF Make: the USB manufacturer where sysfs has it.
    public var make: String?
    /// EXIF Model: the V4L2 card name (`HD Pro Webcam C920`, `vivid`), or `test pattern`.
    public var model: String?
    /// Exposure time in 100 µs units (V4L2's exposure_time_absolute), when the camera has it.
    public var exposureTime100us: Int?
    /// Whether exposure / white balance are automatic, when the camera says.
    public var exposureAutomatic: Bool?
    public var whiteBalanceAutomatic: Bool?
    /// The camera's other control values (`brightness=128 contrast=32`), kept in UserComment:
    /// V4L2's brightness is a processing offset, not EXIF's APEX scene brightness, so it has no
    /// tag of its own.
    public var controls: String?

    public init(make: String? = nil, model: String? = nil) {
        self.make = make
        self.model = model
    }

    public static let testPattern = PhotoOrigin(make: "camroll", model: "test pattern")
}

/// EXIF blocks made and read with libexif.
public enum Exif {
    public static var software: String { Help.version }

    /// An APP1 segment describing a `width` x `height` picture made at `time` by `origin`.
    ///
    /// With `existing` (the EXIF of the picture it was made from: a photo file, a camera's own
    /// block), that block is the base: its tags are kept, ours only fill what it lacks, and the
    /// ones about these pixels (dimensions, `orientation` when given, Software) are replaced; its
    /// embedded thumbnail is dropped when the pixels changed. `shot`: `time` is when the picture
    /// was taken (a camera's frame), so DateTimeOriginal and CreateDate are written; otherwise
    /// (a file, a URL) `time` is only when camroll made this file, the ModifyDate, and the
    /// source's own times stay what they were, or absent. `stripGPS` drops the GPS directory.
    /// Nil when the block would not fit in a segment or libexif fails.
    public static func segment(
        origin: PhotoOrigin, takenAt time: Date, shot: Bool = true, width: Int, height: Int,
        existing: ArraySlice<UInt8>? = nil, orientation: Int? = nil, pixelsChanged: Bool = true,
        stripGPS: Bool = false
    ) -> [UInt8]? {
        guard let data = exif_data_new() else { return nil }
        defer { exif_data_unref(data) }
        if let existing {
            // Keep what the file holds, as it is: no dropping of unknown tags, no "fixing".
            exif_data_unset_option(data, EXIF_DATA_OPTION_IGNORE_UNKNOWN_TAGS)
            exif_data_unset_option(data, EXIF_DATA_OPTION_FOLLOW_SPECIFICATION)
            exif_data_set_option(data, EXIF_DATA_OPTION_DONT_CHANGE_MAKER_NOTE)
            existing.withUnsafeBufferPointer { exif_data_load_data(data, $0.baseAddress, UInt32($0.count)) }
            if pixelsChanged { cexif_drop_thumbnail(data) }
        } else {
            exif_data_set_byte_order(data, EXIF_BYTE_ORDER_INTEL)
            exif_data_set_data_type(data, EXIF_DATA_TYPE_COMPRESSED)
            exif_data_fix(data)  // the tags the standard requires (ExifVersion, ColorSpace…)
            // libexif's default is "Uncalibrated"; the pixels camroll encodes are sRGB.
            cexif_set_short(data, EXIF_IFD_EXIF, EXIF_TAG_COLOR_SPACE, 1)
        }
        if stripGPS { cexif_clear_ifd(data, EXIF_IFD_GPS) }
        // OffsetTime* are EXIF 2.31's; libexif writes 2.1 and a file may say 2.2. A file's own
        // ColorSpace stays (an Adobe RGB photo's pixels are still Adobe RGB); none is sRGB.
        cexif_set_undefined(data, EXIF_IFD_EXIF, EXIF_TAG_EXIF_VERSION, "0232")
        if cexif_has(data, EXIF_IFD_EXIF, EXIF_TAG_COLOR_SPACE) == 0 {
            cexif_set_short(data, EXIF_IFD_EXIF, EXIF_TAG_COLOR_SPACE, 1)
        }

        func fill(_ ifd: ExifIfd, _ tag: ExifTag, _ text: String?) {
            guard let text, !text.isEmpty, cexif_has(data, ifd, tag) == 0 else { return }
            cexif_set_ascii(data, ifd, tag, text)
        }
        let stamp = LocalTime(time)
        // DateTime is when this file was made, with its offset and fraction of a second.
        cexif_set_ascii(data, EXIF_IFD_0, EXIF_TAG_DATE_TIME, stamp.exifDateTime)
        cexif_set_ascii(data, EXIF_IFD_EXIF, EXIF_TAG_SUB_SEC_TIME, stamp.milliseconds)
        cexif_set_ascii(data, EXIF_IFD_EXIF, EXIF_TAG_OFFSET_TIME, stamp.offset)
        // The *Original and *Digitized tags say when the picture was taken: only a frame's own
        // time is that. A block that has them (a camera's own) keeps them.
        if shot {
            if cexif_has(data, EXIF_IFD_EXIF, EXIF_TAG_DATE_TIME_ORIGINAL) == 0 {
                cexif_set_ascii(data, EXIF_IFD_EXIF, EXIF_TAG_DATE_TIME_ORIGINAL, stamp.exifDateTime)
                cexif_set_ascii(data, EXIF_IFD_EXIF, EXIF_TAG_SUB_SEC_TIME_ORIGINAL, stamp.milliseconds)
                cexif_set_ascii(data, EXIF_IFD_EXIF, EXIF_TAG_OFFSET_TIME_ORIGINAL, stamp.offset)
            }
            if cexif_has(data, EXIF_IFD_EXIF, EXIF_TAG_DATE_TIME_DIGITIZED) == 0 {
                cexif_set_ascii(data, EXIF_IFD_EXIF, EXIF_TAG_DATE_TIME_DIGITIZED, stamp.exifDateTime)
                cexif_set_ascii(data, EXIF_IFD_EXIF, EXIF_TAG_SUB_SEC_TIME_DIGITIZED, stamp.milliseconds)
                cexif_set_ascii(data, EXIF_IFD_EXIF, EXIF_TAG_OFFSET_TIME_DIGITIZED, stamp.offset)
            }
        }
        fill(EXIF_IFD_0, EXIF_TAG_MAKE, origin.make)
        fill(EXIF_IFD_0, EXIF_TAG_MODEL, origin.model)
        cexif_set_ascii(data, EXIF_IFD_0, EXIF_TAG_SOFTWARE, software)
        cexif_set_long(data, EXIF_IFD_EXIF, EXIF_TAG_PIXEL_X_DIMENSION, ExifLong(clamping: width))
        cexif_set_long(data, EXIF_IFD_EXIF, EXIF_TAG_PIXEL_Y_DIMENSION, ExifLong(clamping: height))
        if let orientation { cexif_set_short(data, EXIF_IFD_0, EXIF_TAG_ORIENTATION, ExifShort(orientation)) }
        if let exposure = origin.exposureTime100us, exposure > 0 {
            cexif_set_rational(data, EXIF_IFD_EXIF, EXIF_TAG_EXPOSURE_TIME, ExifLong(clamping: exposure), 10_000)
        }
        // EXIF ExposureMode and WhiteBalance: 0 auto, 1 manual.
        if let automatic = origin.exposureAutomatic {
            cexif_set_short(data, EXIF_IFD_EXIF, EXIF_TAG_EXPOSURE_MODE, automatic ? 0 : 1)
        }
        if let automatic = origin.whiteBalanceAutomatic {
            cexif_set_short(data, EXIF_IFD_EXIF, EXIF_TAG_WHITE_BALANCE, automatic ? 0 : 1)
        }
        if let controls = origin.controls, !controls.isEmpty, cexif_has(data, EXIF_IFD_EXIF, EXIF_TAG_USER_COMMENT) == 0 {
            cexif_set_user_comment(data, "v4l2 controls: " + controls)
        }

        var buffer: UnsafeMutablePointer<UInt8>?
        var size: UInt32 = 0
        exif_data_save_data(data, &buffer, &size)
        guard let buffer, size > 0 else { return nil }
        defer { free(buffer) }
        return JPEGSegments.app1(exif: Array(UnsafeBufferPointer(start: buffer, count: Int(size))))
    }

    /// The EXIF Orientation of a JPEG (1…8), 1 when it has none or an invalid one.
    public static func orientation(of jpeg: [UInt8]) -> Int {
        JPEGSegments.exifPayload(of: jpeg).map(orientation(ofBlock:)) ?? 1
    }

    /// The same of an EXIF block ("Exif\0\0…", an APP1's payload).
    static func orientation(ofBlock payload: ArraySlice<UInt8>) -> Int {
        guard let data = exif_data_new() else { return 1 }
        defer { exif_data_unref(data) }
        exif_data_unset_option(data, EXIF_DATA_OPTION_FOLLOW_SPECIFICATION)
        payload.withUnsafeBufferPointer { exif_data_load_data(data, $0.baseAddress, UInt32($0.count)) }
        let value = Int(cexif_get_short(data, EXIF_IFD_0, EXIF_TAG_ORIENTATION))
        return (1...8).contains(value) ? value : 1
    }
}

/// A moment as EXIF writes it: local time, milliseconds and the offset from UTC.
struct LocalTime {
    let exifDateTime: String  // "2026:12:03 09:15:02"
    let milliseconds: String  // "042"
    let offset: String        // "+01:00"

    init(_ date: Date) {
        let seconds = date.timeIntervalSince1970
        var whole = time_t(seconds.rounded(.down))
        var parts = tm()
        localtime_r(&whole, &parts)
        func two(_ value: Int32) -> String { Format.integer(Int(value), width: 2, pad: "0") }
        exifDateTime = "\(parts.tm_year + 1900):\(two(parts.tm_mon + 1)):\(two(parts.tm_mday)) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))"
        let millis = min(999, Int((seconds - seconds.rounded(.down)) * 1000))
        milliseconds = Format.integer(millis, width: 3, pad: "0")
        let minutes = Int(parts.tm_gmtoff) / 60
        offset = (minutes < 0 ? "-" : "+") + two(Int32(abs(minutes) / 60)) + ":" + two(Int32(abs(minutes) % 60))
    }
}

import CV4L2
import FoundationEssentials
import Glibc

extension PhotoOrigin {
    /// What EXIF says of a V4L2 camera: its card name, its USB manufacturer (sysfs), and the
    /// settings it reports through its controls.
    static func camera(path: String, card: String, controls: CameraControls) -> PhotoOrigin {
        var origin = PhotoOrigin(make: usbManufacturer(of: path), model: card)
        var summary: [String] = []
        for control in controls.list() where control.flags & CV4L2_CTRL_FLAG_WRITE_ONLY == 0 {
            guard let value = controls.value(of: control) else { continue }
            switch control.name {
            case "exposure_time_absolute": origin.exposureTime100us = Int(value)
            case "auto_exposure": origin.exposureAutomatic = value != 1  // V4L2_EXPOSURE_MANUAL
            case "white_balance_automatic", "white_balance_temperature_auto": origin.whiteBalanceAutomatic = value != 0
            case _ where imageControls.contains(control.name): summary.append("\(control.name)=\(value)")
            default: break
            }
        }
        origin.controls = summary.isEmpty ? nil : summary.joined(separator: " ")
        return origin
    }

    /// The picture-shaping controls worth keeping with a photo (not a driver's test controls).
    static let imageControls: Set<String> = [
        "brightness", "contrast", "saturation", "hue", "gamma", "gain", "sharpness",
        "backlight_compensation", "white_balance_temperature", "power_line_frequency",
    ]

    /// The USB device's manufacturer string, or `USB vvvv:pppp` when it has none; nil for a
    /// camera that is not on USB (vivid, a CSI sensor). `sysfs` is where sysfs is mounted.
    static func usbManufacturer(of path: String, sysfs: String = "/sys") -> String? {
        guard let real = realpath(path, nil) else { return nil }
        let node = String(cString: real).split(separator: "/").last.map(String.init) ?? ""
        free(real)
        return usbManufacturer(node: node, sysfs: sysfs)
    }

    static func usbManufacturer(node: String, sysfs: String) -> String? {
        guard let device = realpath("\(sysfs)/class/video4linux/\(node)/device", nil) else { return nil }
        var directory = String(cString: device)
        free(device)
        // The video node hangs off a USB interface; the device with the IDs is its parent.
        for _ in 0..<3 {
            func read(_ name: String) -> String? {
                (try? String(contentsOfFile: directory + "/" + name, encoding: .utf8))?.trimmed().printable
            }
            if let vendor = read("idVendor"), let product = read("idProduct") {
                return read("manufacturer").flatMap { $0.isEmpty ? nil : $0 } ?? "USB \(vendor):\(product)"
            }
            directory = PathText.directory(of: directory)
        }
        return nil
    }
}

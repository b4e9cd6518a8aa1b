/// JSON's null, for `[String: Any]` values.
enum JSONNull { case null }

/// JSON text already written, put in as it is: a long array encoded one element at a time
/// (verify's problems, millions when a card is missing) rather than held as Swift values.
struct JSONText {
    let text: String

    /// `elements`, each encoded as JSONLine encodes a value, as one JSON array.
    init<Elements: Sequence>(array elements: Elements, _ element: (Elements.Element) -> Any) {
        var text = "["
        for (index, item) in elements.enumerated() {
            if index > 0 { text += "," }
            text += JSONLine.encode(element(item)).dropLast()
        }
        self.text = text + "]"
    }
}

enum JSONLine {
    /// One compact JSON object and a newline, keys sorted so output is stable. Values: String,
    /// integers, Double, Bool, JSONNull or nil, arrays and dictionaries of them.
    static func encode(_ object: Any) -> String {
        var out = ""
        write(object, to: &out)
        return out + "\n"
    }

    private static func write(_ value: Any, to out: inout String) {
        switch value {
        case let text as String: quote(text, to: &out)
        case let flag as Bool: out += flag ? "true" : "false"
        case let number as Int: out += String(number)
        case let number as Int64: out += String(number)
        case let number as Int32: out += String(number)
        case let number as UInt32: out += String(number)
        case let number as UInt64: out += String(number)
        case let number as Double:
            // Integral values as integers, as JSON writers do; others in Swift's shortest form.
            if number.isFinite && number == number.rounded() && abs(number) < 1e15 {
                out += String(Int64(number))
            } else {
                out += number.isFinite ? String(number) : "null"
            }
        case let array as [Any]:
            out += "["
            for (index, element) in array.enumerated() {
                if index > 0 { out += "," }
                write(element, to: &out)
            }
            out += "]"
        case let dictionary as [String: Any]:
            out += "{"
            for (index, key) in dictionary.keys.sorted().enumerated() {
                if index > 0 { out += "," }
                quote(key, to: &out)
                out += ":"
                write(dictionary[key]!, to: &out)
            }
            out += "}"
        case let written as JSONText: out += written.text
        default:
            // JSONNull, and nil wrapped in Any.
            out += "null"
        }
    }

    private static func quote(_ text: String, to out: inout String) {
        out += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                out += "\\u00" + Format.hexByte(UInt8(scalar.value)).lowercased()
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}

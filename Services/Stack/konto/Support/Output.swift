import Foundation

/// Where answers go: lines for people, one JSON document for scripts; failures on standard error.
struct Output: Sendable {
    let json: Bool

    /// `text` for people, `document` (encoded as JSON) for scripts.
    func answer(_ text: @autoclosure () -> String, _ document: @autoclosure () -> some Encodable) {
        if json {
            Self.write(Self.encode(document()) + "\n", to: .standardOutput)
        } else {
            Self.write(text() + "\n", to: .standardOutput)
        }
    }

    func fail(_ failure: CommandFailure) {
        if json {
            Self.write(Self.encode(failure.document) + "\n", to: .standardError)
        } else {
            Self.write("konto: " + failure.message + "\n", to: .standardError)
        }
    }

    /// A note for a person at a terminal (prompts, progress); never part of an answer.
    static func note(_ text: String) {
        write(text, to: .standardError)
    }

    static func write(_ text: String, to handle: FileHandle) {
        handle.write(Data(text.utf8))
    }

    static func encode(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        guard let data = try? encoder.encode(value) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }
}

/// A compiled `Regex`, shared between tasks.
///
/// `Regex` is not declared `Sendable`, but a compiled regex is immutable and its lazily lowered program is
/// initialised atomically, so matching from several tasks is safe. We lower it once here so no validation
/// pays for compilation.
struct CompiledPattern: @unchecked Sendable {
    private let regex: Regex<AnyRegexOutput>

    init(_ pattern: String) throws {
        // Unicode scalars, not grapheme clusters, and `.` matching line breaks too: the semantics of the JSON Schema
        // patterns the HTTP API's document publishes for each rule (`.{8,}` counts code points, as `maxLength` does),
        // so a value the document calls valid is one the rule accepts.
        regex = try Regex(pattern).matchingSemantics(.unicodeScalar).dotMatchesNewlines()
        _ = try regex.wholeMatch(in: "")
    }

    func wholeMatches(_ value: String) -> Bool {
        ((try? regex.wholeMatch(in: value)) ?? nil) != nil
    }
}

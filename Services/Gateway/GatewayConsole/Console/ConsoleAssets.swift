/// The console's stylesheet, script and icon (`Resources/Assets`), compiled into the gateway and served by it (no build
/// step, no CDN, no external font).
enum ConsoleAssets {
    /// The pages name it, so browsers do not ask for `/favicon.ico` (a 404 the API would answer).
    static let icon = ConsoleTemplates.text(PackageResources.icon_svg)
    static let stylesheet = ConsoleTemplates.text(PackageResources.console_css)
    static let script = ConsoleTemplates.text(PackageResources.console_js)
}

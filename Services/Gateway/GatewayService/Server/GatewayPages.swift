import Hummingbird
import KontoModel
import KontoWire

/// Pages a gateway serves beside its API: the web console (the GatewayConsole target), which lives outside this
/// target so that the API does not carry its templates, forms and scripts. The pages are made once the server has
/// its operations, and answer through them in process.
package protocol GatewayPages: Sendable {
    /// Where the pages are served (`/account`); a refusal under it is rendered as a page, not a problem document.
    var basePath: String { get }
    func register(on router: Router<GatewayRequestContext>)
    /// A refused request under ``basePath`` as a page.
    func refusalPage(_ problem: GatewayProblem) -> Response
}

/// What pages are made from: the gateway's operations and the parts of its configuration they need.
package struct GatewayPagesContext: Sendable {
    package let operations: GatewayOperations
    /// The admin API's, for pages on the admin listener.
    package let adminOperations: GatewayAdminOperations
    package let configuration: GatewayConfiguration
}

/// Makes the pages for a gateway (nil: none, e.g. the console is switched off).
package typealias GatewayPagesFactory = @Sendable (GatewayPagesContext) throws -> (any GatewayPages)?

import Foundation
import GatewayService
import HTTPTypes
import Hummingbird
import KontoModel

/// "Download my data": the account's copy as the API's `GET /v1/account/export` answers it, saved as a file. The
/// download is a CSRF-checked form (a cross-site page must not make the browser fetch it), counted as a credential
/// attempt, and asks for the password once the privileged window has shut.
extension AccountConsole {
    func registerExport(on router: Router<GatewayRequestContext>) {
        let base = options.basePath
        router.get(RouterPath(base + "/export")) { request, _ in await self.exportPage(self.visit(request)) }
        router.post(RouterPath(base + "/export")) { request, _ in await self.form(request, credentials: true, self.downloadExport) }
    }

    func exportPage(_ visit: Visit) async -> Response {
        guard visit.session != nil else { return redirect("/", visit: visit) }
        return page("export", title: "Your data", visit: visit)
    }

    static let exportPasswordForm = ConsolePage.Form.currentPasswordFirst(
        mainId: "export-password", formPrefix: "export-password", heading: "Download your data", action: "/export", submitLabel: "Download"
    )

    private func downloadExport(_ visit: Visit, _ form: ConsoleForm) async -> Response {
        guard let session = visit.session else { return redirect("/", visit: visit) }
        let current = form["currentPassword"].flatMap { $0.isEmpty ? nil : $0 }
        do {
            let copy = try await operations.asSession(session) { try await operations.accountCopy(currentPassword: current) }
            var headers = Self.securityHeaders
            headers[.contentType] = "application/json"
            headers[.contentDisposition] = copy.disposition
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: copy.json)))
        } catch {
            return securedStepRefused(error, asking: Self.exportPasswordForm, title: "Download your data", passwordGiven: current != nil, visit: visit)
        }
    }
}

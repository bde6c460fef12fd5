import Foundation
import KontoClient
import KontoModel

// Signs up (or logs in) at the gateway named by the first argument, then prints whether the address is verified
// and, given a mailed code as the second argument, confirms it: the app's path in a few lines.
let arguments = CommandLine.arguments.dropFirst()
guard let gateway = arguments.first else {
    print("usage: KontoSample GATEWAY_URL [VERIFICATION_CODE]")
    exit(2)
}
let client = KontoClient(gatewayURL: gateway, clientName: "Konto sample")
do {
    let userId = "sample@example.org"
    do {
        try await client.signUp(userId: userId, password: "a sample password 1", details: client.schema().details(fromAssignments: ["name=Sam Sample"]))
    } catch let error as KontoClientError where error.code == "account.credentialsTaken" {
        try await client.logIn(userId: userId, password: "a sample password 1")
    }
    if let code = arguments.dropFirst().first {
        try await client.confirmEmailVerification(code: code)
    }
    let account = try await client.account()
    print("signed in; address verified: \(account.details[EmailVerifiedKey.self] ?? false)")
} catch let error as KontoClientError {
    print("refused: \(error.code) \(error.detail ?? "")")
    exit(1)
}

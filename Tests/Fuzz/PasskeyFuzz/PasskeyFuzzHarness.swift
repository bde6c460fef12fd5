import Foundation
import KontoWebAuthn

/// Feeds one input to a passkey parser or verifier, chosen by its first byte; the rest is what a hostile client
/// would send there. Every call must return or throw ``WebAuthnError`` (or CBOR's error): a trap is a finding.
enum PasskeyFuzzHarness {
    static let verifier = WebAuthnVerifier(relyingParty: .init(id: "localhost", name: "Konto", origins: ["http://localhost:5000"]))
    static let challenge = Array("konto-fuzz-challenge".utf8)

    /// Client data that passes its checks, so that inputs reach the attestation object and authenticator data.
    static func clientData(_ type: String) -> [UInt8] {
        let encoded = Data(challenge).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        return Array(#"{"type":"\#(type)","challenge":"\#(encoded)","origin":"http://localhost:5000"}"#.utf8)
    }

    static let createData = clientData("webauthn.create")
    static let getData = clientData("webauthn.get")
    /// py_webauthn's ES256 credential key.
    static let key = try! COSEKey(bytes: Array(Data(base64Encoded: "pQECAyYgASFYIIeDTe+gN8A+zQclHoRnGFWN8ehM1b7yAsa8I8KIvmplIlgg4nFGT5px8o6gpPZZhO01wdy9crDSA/Ngtkx0vGpvPHI=")!))

    static func run(_ input: UnsafeRawBufferPointer) {
        guard let selector = input.first else { return }
        let bytes = Array(input.dropFirst())
        switch selector % 5 {
        case 0:
            _ = try? CBORDecoder.decode(bytes)
            _ = try? CBORDecoder.decodePrefix(bytes)
        case 1:
            if let key = try? COSEKey(bytes: bytes) {
                _ = key.isValidSignature(bytes, for: bytes)
            }
        case 2:
            _ = try? AuthenticatorData(bytes)
        case 3:
            _ = try? verifier.verifyRegistration(clientDataJSON: createData, attestationObject: bytes, expectedChallenge: challenge, requireUserVerification: selector & 0x80 != 0)
        default:
            // Authenticator data, then a signature: the input's second byte says where it splits.
            let split = min(Int(bytes.first ?? 0) + 37, bytes.count)
            _ = try? verifier.verifyAssertion(
                clientDataJSON: getData, authenticatorData: Array(bytes.dropFirst().prefix(split)), signature: Array(bytes.dropFirst().dropFirst(split)),
                expectedChallenge: challenge, publicKey: key, storedSignCount: 0, requireUserVerification: selector & 0x80 != 0
            )
            _ = try? WebAuthnVerifier.challenge(inClientData: bytes)
        }
    }

    /// Seeds: real attestation objects (the published vectors) and COSE keys, each behind its selector.
    static func seeds() -> [(name: String, bytes: [UInt8])] {
        func b64url(_ text: String) -> [UInt8] {
            var text = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            while text.count % 4 != 0 { text += "=" }
            return Array(Data(base64Encoded: text)!)
        }
        let attestation = b64url("o2NmbXRkbm9uZWdhdHRTdG10oGhhdXRoRGF0YVjESZYN5YgOjGh0NBcPZHZgW4_krrmihjLHmVzzuoMdl2NFAAAAFwAAAAAAAAAAAAAAAAAAAAAAQPctcQPE5oNRRJk_nO_371mf7qE7qIodzr0eOf6ACvnMB1oQG165dqutoi1U44shGezu5_gkTjmOPeJO0N8a7P-lAQIDJiABIVggSFbUJF-42Ug3pdM8rDRFu_N5oiVEysPDB6n66r_7dZAiWCDUVnB39FlGypL-qAoIO9xWHtJygo2jfDmHl-_eKFRLDA")
        let rsaKey = b64url("pAEDAzkBACBZAQDfV20epzvQP-HtcdDpX-cGzdOxy73WQEvsU7Dnr9UWJophEfpngouvgnRLXaEUn_d8HGkp_HIx8rrpkx4BVs6X_B6ZjhLlezjIdJbLbVeb92BaEsmNn1HW2N9Xj2QM8cH-yx28_vCjf82ahQ9gyAr552Bn96G22n8jqFRQKdVpO-f-bvpvaP3IQ9F5LCX7CUaxptgbog1SFO6FI6ob5SlVVB00lVXsaYg8cIDZxCkkENkGiFPgwEaZ7995SCbiyCpUJbMqToLMgojPkAhWeyktu7TlK6UBWdJMHc3FPAIs0lH_2_2hKS-mGI1uZAFVAfW1X-mzKL0czUm2P1UlUox7IUMBAAE")
        let ecKey = b64url("pQECAyYgASFYIIeDTe-gN8A-zQclHoRnGFWN8ehM1b7yAsa8I8KIvmplIlgg4nFGT5px8o6gpPZZhO01wdy9crDSA_Ngtkx0vGpvPHI")
        let assertionData = b64url("SZYN5YgOjGh0NBcPZHZgW4_krrmihjLHmVzzuoMdl2MBAAAATg")
        let signature = b64url("MEUCIGisVZOBapCWbnJJvjelIzwpixxIwkjCCb5aCHafQu68AiEA88v-2pJNNApPFwAKFiNuf82-2hBxYW5kGwVweeoxCwo")
        return [
            ("cbor-attestation", [0] + attestation),
            ("cose-rsa", [1] + rsaKey),
            ("cose-ec2", [1] + ecKey),
            ("authenticator-data", [2] + Array(attestation.suffix(196))),
            ("registration", [3] + attestation),
            ("assertion", [4, UInt8(assertionData.count - 37)] + assertionData + signature),
        ]
    }
}

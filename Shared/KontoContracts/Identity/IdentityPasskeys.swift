import KontoModel

// Passkeys (WebAuthn) in the JSON forms browsers take and give (WebAuthn level 3's `PublicKeyCredentialCreationOptionsJSON`,
// `PublicKeyCredentialRequestOptionsJSON`, `RegistrationResponseJSON`, `AuthenticationResponseJSON`): binary members
// are base64url without padding, so a page passes them to `PublicKeyCredential.parseCreationOptionsFromJSON` and
// sends `credential.toJSON()` back unchanged. Members a browser adds that Konto does not read are ignored.

/// A passkey credential's reference in options: to exclude at registration, to allow at login.
public struct PasskeyDescriptor: Codable, Sendable, Hashable {
    public var type: String
    public var id: String
    public var transports: [String]?

    public init(id: String, transports: [String]? = nil) {
        self.type = "public-key"
        self.id = id
        self.transports = transports
    }
}

/// What `navigator.credentials.create` needs to make a passkey for the account.
public struct PasskeyCreationOptions: Codable, Sendable, Hashable {
    public struct RelyingParty: Codable, Sendable, Hashable {
        public var id: String
        public var name: String

        public init(id: String, name: String) {
            self.id = id
            self.name = name
        }
    }

    public struct User: Codable, Sendable, Hashable {
        /// base64url of the account's user handle (its account ID's bytes: no personal data).
        public var id: String
        public var name: String
        public var displayName: String

        public init(id: String, name: String, displayName: String) {
            self.id = id
            self.name = name
            self.displayName = displayName
        }
    }

    public struct Parameter: Codable, Sendable, Hashable {
        public var type: String
        public var alg: Int

        public init(alg: Int) {
            self.type = "public-key"
            self.alg = alg
        }
    }

    public struct Selection: Codable, Sendable, Hashable {
        public var residentKey: String
        public var requireResidentKey: Bool
        public var userVerification: String

        public init(residentKey: String, requireResidentKey: Bool, userVerification: String) {
            self.residentKey = residentKey
            self.requireResidentKey = requireResidentKey
            self.userVerification = userVerification
        }
    }

    public var rp: RelyingParty
    public var user: User
    /// base64url; valid for ``timeout`` milliseconds and once.
    public var challenge: String
    public var pubKeyCredParams: [Parameter]
    public var timeout: Int
    /// The account's passkeys: an authenticator that holds one of them makes no second.
    public var excludeCredentials: [PasskeyDescriptor]
    public var authenticatorSelection: Selection
    public var attestation: String

    public init(
        rp: RelyingParty, user: User, challenge: String, pubKeyCredParams: [Parameter], timeout: Int,
        excludeCredentials: [PasskeyDescriptor], authenticatorSelection: Selection, attestation: String
    ) {
        self.rp = rp
        self.user = user
        self.challenge = challenge
        self.pubKeyCredParams = pubKeyCredParams
        self.timeout = timeout
        self.excludeCredentials = excludeCredentials
        self.authenticatorSelection = authenticatorSelection
        self.attestation = attestation
    }
}

/// What `navigator.credentials.get` needs to sign in with a passkey.
public struct PasskeyRequestOptions: Codable, Sendable, Hashable {
    public var challenge: String
    public var timeout: Int
    public var rpId: String
    /// Empty for a passwordless login (the authenticator offers its passkeys for the site); the account's passkeys
    /// when it is the second factor after a password.
    public var allowCredentials: [PasskeyDescriptor]
    /// `required` for a passwordless login, `preferred` for a second factor.
    public var userVerification: String

    public init(challenge: String, timeout: Int, rpId: String, allowCredentials: [PasskeyDescriptor], userVerification: String) {
        self.challenge = challenge
        self.timeout = timeout
        self.rpId = rpId
        self.allowCredentials = allowCredentials
        self.userVerification = userVerification
    }
}

/// A new passkey as `navigator.credentials.create` made it (`RegistrationResponseJSON`).
public struct PasskeyRegistrationCredential: Codable, Sendable, Hashable {
    public struct Response: Codable, Sendable, Hashable {
        public var clientDataJSON: String
        public var attestationObject: String
        public var transports: [String]?

        public init(clientDataJSON: String, attestationObject: String, transports: [String]? = nil) {
            self.clientDataJSON = clientDataJSON
            self.attestationObject = attestationObject
            self.transports = transports
        }
    }

    public var id: String
    public var rawId: String
    public var type: String
    public var response: Response

    public init(id: String, rawId: String? = nil, response: Response) {
        self.id = id
        self.rawId = rawId ?? id
        self.type = "public-key"
        self.response = response
    }
}

/// A passkey's signature as `navigator.credentials.get` made it (`AuthenticationResponseJSON`).
public struct PasskeyAssertionCredential: Codable, Sendable, Hashable {
    public struct Response: Codable, Sendable, Hashable {
        public var clientDataJSON: String
        public var authenticatorData: String
        public var signature: String
        public var userHandle: String?

        public init(clientDataJSON: String, authenticatorData: String, signature: String, userHandle: String? = nil) {
            self.clientDataJSON = clientDataJSON
            self.authenticatorData = authenticatorData
            self.signature = signature
            self.userHandle = userHandle
        }
    }

    public var id: String
    public var rawId: String
    public var type: String
    public var response: Response

    public init(id: String, rawId: String? = nil, response: Response) {
        self.id = id
        self.rawId = rawId ?? id
        self.type = "public-key"
        self.response = response
    }
}

/// Registers a passkey made for options from ``IdentityContract/passkeyRegistrationOptions`` (whose call was the
/// security-related check), under a name of the owner's choice.
public struct IdentityRegisterPasskeyRequest: Codable, Sendable {
    public var token: BearerToken
    public var name: String?
    public var credential: PasskeyRegistrationCredential

    public init(token: BearerToken, name: String? = nil, credential: PasskeyRegistrationCredential) {
        self.token = token
        self.name = name
        self.credential = credential
    }
}

/// Asks for options to sign in with a passkey (nothing to give: the passkey names the account).
public struct IdentityPasskeyOptionsRequest: Codable, Sendable {
    public init() {}
}

/// A passwordless login: a passkey's signature over a challenge from ``IdentityContract/passkeyLoginOptions``.
public struct IdentityPasskeyLoginRequest: Codable, Sendable {
    public var credential: PasskeyAssertionCredential
    public var clientAddress: String?
    /// As in ``IdentityLoginRequest/clientDevice``.
    public var clientDevice: String?
    /// What the client calls itself (its User-Agent), shown in the owner's list of sessions; bounded by Identity.
    public var clientName: String?

    public init(credential: PasskeyAssertionCredential, clientAddress: String? = nil, clientDevice: String? = nil, clientName: String? = nil) {
        self.credential = credential
        self.clientAddress = clientAddress
        self.clientDevice = clientDevice
        self.clientName = clientName
    }
}

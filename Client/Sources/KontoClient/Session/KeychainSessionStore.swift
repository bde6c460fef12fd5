#if canImport(Security)
import Foundation
import Security

/// Keeps the session in the keychain on Apple platforms: one generic-password item per gateway, readable after the
/// device's first unlock and never leaving the device (no iCloud Keychain, no backup restored elsewhere). Compiled
/// only where the Security framework exists; elsewhere ``FileSessionStore`` keeps a session between runs.
public struct KeychainSessionStore: KontoSessionStore {
    /// The item's service: the gateway's base URL, so sessions of several deployments stay apart.
    public let gateway: String
    /// The item's account name.
    public let account: String
    /// A keychain access group shared with the app's extensions, if any.
    public let accessGroup: String?

    public init(gateway: String, account: String = "konto-session", accessGroup: String? = nil) {
        self.gateway = gateway
        self.account = account
        self.accessGroup = accessGroup
    }

    public func load() throws -> KontoSession? {
        var query = itemQuery
        query[kSecReturnData as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        var item: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &item)
        switch status {
        case errSecSuccess:
            guard let data = item as? Data, let session = try? JSONDecoder().decode(KontoSession.self, from: data) else {
                throw Self.failure("The keychain's session item could not be read.", status: status)
            }
            return session
        case errSecItemNotFound:
            return nil
        default:
            throw Self.failure("The keychain refused to read the session.", status: status)
        }
    }

    public func save(_ session: KontoSession) throws {
        let data = try JSONEncoder().encode(session)
        var status = SecItemUpdate(itemQuery as CFDictionary, [kSecValueData as String: data] as CFDictionary)
        if status == errSecItemNotFound {
            var item = itemQuery
            item[kSecValueData as String] = data
            item[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
            status = SecItemAdd(item as CFDictionary, nil)
        }
        guard status == errSecSuccess else { throw Self.failure("The keychain refused to keep the session.", status: status) }
    }

    public func clear() throws {
        let status = SecItemDelete(itemQuery as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else {
            throw Self.failure("The keychain refused to remove the session.", status: status)
        }
    }

    /// What names the item: its class, service and account (and access group); on macOS the data-protection keychain,
    /// as on iOS, rather than the login keychain's file.
    private var itemQuery: [String: Any] {
        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: gateway,
            kSecAttrAccount as String: account,
            kSecUseDataProtectionKeychain as String: true,
        ]
        if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
        return query
    }

    private static func failure(_ detail: String, status: OSStatus) -> KontoClientError {
        KontoClientError(code: KontoClientError.Code.keychain, status: 0, detail: detail + " (OSStatus \(status))")
    }
}
#endif

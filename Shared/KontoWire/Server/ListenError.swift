import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// A server that could not take its address: which server, which address, and why, in words an operator can act on
/// ("the address is in use" rather than `bind(descriptor:ptr:bytes:): Address already in use (errno: 98)`).
///
/// Thrown by the wire servers and the gateway when binding fails, so a process (or the dev stack, which runs four
/// servers) says which of its ports could not be bound.
public struct ListenError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Why the address could not be taken; stable, for a caller to tell cases apart.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// Another socket listens there (EADDRINUSE).
        public static let addressInUse = Code(rawValue: "listen.addressInUse")
        /// A port below 1024 without the privilege to bind it (EACCES).
        public static let permissionDenied = Code(rawValue: "listen.permissionDenied")
        /// The host is not an address of this machine (EADDRNOTAVAIL), or does not resolve.
        public static let addressUnavailable = Code(rawValue: "listen.addressUnavailable")
        /// Anything else; ``ListenError/reason`` says what.
        public static let failed = Code(rawValue: "listen.failed")
    }

    public let code: Code
    /// The server's name (`identity`, `gateway`).
    public let server: String
    public let host: String
    public let port: Int
    /// The system's words for anything but the known cases.
    public let reason: String

    public init(code: Code, server: String, host: String, port: Int, reason: String) {
        self.code = code
        self.server = server
        self.host = host
        self.port = port
        self.reason = reason
    }

    /// The error binding `host:port` failed with, as a ListenError (an error that is one already stays as it is).
    public init(server: String, host: String, port: Int, error: any Error) {
        if let error = error as? ListenError {
            self = error
            return
        }
        let code: Code
        switch (error as? IOError)?.errnoCode {
        case EADDRINUSE?: code = .addressInUse
        case EACCES?: code = .permissionDenied
        case EADDRNOTAVAIL?: code = .addressUnavailable
        default: code = error is SocketAddressError ? .addressUnavailable : .failed
        }
        self.init(code: code, server: server, host: host, port: port, reason: "\(error)")
    }

    public var description: String {
        let problem = switch code {
        case .addressInUse: "the address is in use (another process listens on port \(port); stop it or choose another port)"
        case .permissionDenied: "permission denied (ports below 1024 need privileges; choose a higher port)"
        case .addressUnavailable: "\(host) is not an address of this machine (\(reason))"
        default: reason
        }
        return "\(server) could not listen on \(host):\(port): \(problem)"
    }
}

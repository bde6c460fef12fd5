/// A self-signed certificate for localhost and 127.0.0.1 (its own CA), made for the tests only, valid until 2126:
/// wire TLS in unit tests and in the process stack.
public enum TLSTestCertificate {
    public static let certificatePEM = """
-----BEGIN CERTIFICATE-----
MIIBmzCCAUGgAwIBAgIUaJe5gJ8227cCVOJknSWlUEZr0pswCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJbG9jYWxob3N0MCAXDTI2MTEyMTIzMjcyOFoYDzIxMjYxMDI4
MjMyNzI4WjAUMRIwEAYDVQQDDAlsb2NhbGhvc3QwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAAStTsQ7QTyuaJh7YQm4n6bq+2LdGgRNSTa9rgkM3bOdmOzhe6o/LdET
dWwHsGBfOnJKJZxcZkZthQE7C8Z52igoo28wbTAdBgNVHQ4EFgQUsDkIL3sZzwUm
GmZD5zd0M5ASIBgwHwYDVR0jBBgwFoAUsDkIL3sZzwUmGmZD5zd0M5ASIBgwDwYD
VR0TAQH/BAUwAwEB/zAaBgNVHREEEzARgglsb2NhbGhvc3SHBH8AAAEwCgYIKoZI
zj0EAwIDSAAwRQIhALEn917P8r08xe6djh5c8bTEUZN2KMoI5yRO4MveIF1PAiBH
VAyFxXZDF7OexKaVXWxkJflu4uugHVudD0Rlnk79Pw==
-----END CERTIFICATE-----
"""
    public static let privateKeyPEM = """
-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgzZZZatq5nHxoAHc/
ws1zBJWVhjUUpASSB9l403dWzXGhRANCAAStTsQ7QTyuaJh7YQm4n6bq+2LdGgRN
STa9rgkM3bOdmOzhe6o/LdETdWwHsGBfOnJKJZxcZkZthQE7C8Z52igo
-----END PRIVATE KEY-----
"""
}

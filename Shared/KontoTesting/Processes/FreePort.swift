/// A loopback TCP port no one listens on right now, for a service process to bind.
public enum FreePort {
    public static func loopback() throws -> Int {
        try TemporaryPostgresCluster.freeLoopbackPort()
    }
}

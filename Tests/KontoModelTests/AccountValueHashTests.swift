import KontoModel
import Testing

@Suite("Account values as dictionary keys and set members")
struct AccountValueHashTests {
    @Test("values that are equal hash alike, 1 and 1.0 included, nested too")
    func consistentWithEquality() {
        let pairs: [(AccountValue, AccountValue)] = [
            (.integer(1), .double(1.0)),
            (.array([.integer(2)]), .array([.double(2)])),
            (.object(["a": .integer(-3)]), .object(["a": .double(-3)])),
            (.integer(Int64.max), .integer(Int64.max)),
        ]
        for (left, right) in pairs {
            #expect(left == right)
            #expect(left.hashValue == right.hashValue, "\(left) and \(right)")
        }
        #expect(Set<AccountValue>([.integer(1), .double(1), .string("1"), .bool(true)]).count == 3)
        #expect(AccountDetails(values: ["n": .integer(5)]).hashValue == AccountDetails(values: ["n": .double(5)]).hashValue)
    }
}

// The stack kit (`withStack`: a whole Konto in the test's process) on top of the low test support, which it passes
// on: a test that needs the stack imports this alone. Tests that need only PostgreSQL, free ports, processes or
// contract replay import KontoTestSupport and build no service.
@_exported import KontoTestSupport

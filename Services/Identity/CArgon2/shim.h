// Debian's libargon2 (package libargon2-dev), the reference implementation of Argon2.
#include <argon2.h>

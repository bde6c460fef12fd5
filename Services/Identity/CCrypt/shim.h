// Debian's libxcrypt (package libcrypt-dev): bcrypt's `$2b$`/`$2a$`/`$2y$` hashes, verified for imported passwords.
#include <crypt.h>

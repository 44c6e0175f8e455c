/* Credentials written into a git config file, in URLs
 * (`url = https://user:TOKEN@host/repo.git`) and in http.extraHeader
 * values (`extraheader = AUTHORIZATION: basic ...`, as CI checkouts
 * leave them): the sandbox shows the file
 * with them removed and everything else byte for byte as it is, so that git
 * inside still reads its remotes, branches and settings. */
#pragma once

#include <stddef.h>

#include "base/strbuf.h"

/* Copies text (len bytes, any content) to out with the user information
 * of every URL removed: all of it ("user:token@", "token@") for http(s)
 * and ftp(s), where a user name alone is often the token; only the
 * password (":secret") for other schemes, whose user name ssh needs. The
 * value of every extraHeader key is removed whole (the key stays, empty,
 * which git reads as "no extra headers").
 * Returns how many URLs and headers were changed (0: out holds text
 * unchanged). */
size_t git_strip_url_credentials(const char *text, size_t len, struct strbuf *out);

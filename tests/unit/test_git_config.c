/* Unit tests for the git config reader: each case's expected pairs are what
 * `git config -f FILE --list` prints for the same text, and malformed text
 * is refused where git refuses it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "git/config.h"
#include "git/url_credentials.h"
#include "base/cleanup.h"
#include "base/strbuf.h"
#include "unit.h"

static int collect(const char *key, const char *value, void *data)
{
	struct strbuf *sb = data;
	strbuf_addstr(sb, key);
	if (value)
		strbuf_addf(sb, "=%s", value);
	strbuf_addch(sb, '\n');
	return 0;
}

struct config_case {
	const char *text;
	const char *pairs; /* one "key=value" or "key" per line */
};

static void git_config_reads_what_git_reads(void **state)
{
	static const struct config_case cases[] = {
	    {"[core]\n\tfsmonitor = \"touch /tmp/PWN;false\"\n\thooksPath = .githooks\n",
	     "core.fsmonitor=touch /tmp/PWN;false\ncore.hookspath=.githooks\n"},
	    {"[include]\n\tpath = ../x.cfg\n[includeIf \"gitdir:~/work/\"]\n\tpath = w.cfg\n",
	     "include.path=../x.cfg\nincludeif.gitdir:~/work/.path=w.cfg\n"},
	    {"; c\n# c\n[alias]\n\tst = \"!sh -c \\\"echo \\\\\\\"x\\\\\\\"\\\"\" # t\n"
	     "\tco = checkout \\\n  --quiet\n",
	     "alias.st=!sh -c \"echo \\\"x\\\"\"\nalias.co=checkout   --quiet\n"},
	    {"[Filter \"LFS\"]\n\tclean = git-lfs clean -- %f\n\trequired\n",
	     "filter.LFS.clean=git-lfs clean -- %f\nfilter.LFS.required\n"},
	    {"\xef\xbb\xbf[core.Sub]\r\n\teditor=vim\r\n[diff \"x y\"] command = ./d.sh\n",
	     "core.sub.editor=vim\ndiff.x y.command=./d.sh\n"},
	    {"[a]\nb = x\\ty\\n\\b\\\\\\\"", "a.b=x\ty\n\b\\\"\n"},
	    {"[a]\nb = \"  kept  \"  ;c\nc\n", "a.b=  kept  \na.c\n"},
	    {"[a \"q\\\"\\\\x\"]\nk=v", "a.q\"\\x.k=v\n"},
	    {"[a]\nb=", "a.b=\n"},
	    {"k = v\n[a]\nb\n", "a.b\n"},
	    {"", ""},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		struct strbuf sb = STRBUF_INIT;
		int r = git_config_parse(cases[i].text, strlen(cases[i].text), collect, &sb);
		if (r != 0)
			unit_fail("case %zu: refused", i);
		if (strcmp(strbuf_str(&sb), cases[i].pairs))
			unit_fail("case %zu: got\n%s\nexpected\n%s", i, strbuf_str(&sb),
				  cases[i].pairs);
		strbuf_release(&sb);
	}
}

static void git_config_refuses_malformed_lines_after_reporting_the_earlier_ones(void **state)
{
	static const char *const bad[] = {
	    "[a]\nb = \"open\n", "[a]\nb c\n",	 "[a \"x\"\nb=1\n", "[a]\nb = \\q\n",
	    "[]\nk=v\n",	 "[a b]\nk=v\n", "[a]\n1k=v\n",	    "[a]\nb = x\0y\n[c]\nd=1\n",
	};
	static const size_t lens[] = {0, 0, 0, 0, 0, 0, 0, 20};
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		struct strbuf sb = STRBUF_INIT;
		size_t len = lens[i] ? lens[i] : strlen(bad[i]);
		if (git_config_parse(bad[i], len, collect, &sb) != -1)
			unit_fail("case %zu: accepted, got\n%s", i, strbuf_str(&sb));
		strbuf_release(&sb);
	}
	struct strbuf sb = STRBUF_INIT;
	const char *text = "[a]\nx=1\ny z\n";
	assert_int_equal(git_config_parse(text, strlen(text), collect, &sb), -1);
	assert_string_equal(strbuf_str(&sb), "a.x=1\n");
	strbuf_release(&sb);
}

static int stop_at_second(const char *key, const char *value, void *data)
{
	int *seen = data;
	(void)key;
	(void)value;
	return ++*seen == 2 ? 7 : 0;
}

static void git_config_stops_when_the_callback_asks(void **state)
{
	(void)state;
	int seen = 0;
	const char *text = "[a]\nx=1\ny=2\nz=3\n";
	assert_int_equal(git_config_parse(text, strlen(text), stop_at_second, &seen), 7);
	assert_int_equal(seen, 2);
}

struct strip_case {
	const char *in, *out;
	size_t changed;
};

static void git_strip_url_credentials_removes_only_credentials(void **state)
{
	static const struct strip_case cases[] = {
	    {"[remote \"origin\"]\n\turl = https://user:ghp_TOKEN@github.com/o/r.git\n"
	     "\tfetch = +refs/heads/*:refs/remotes/origin/*\n",
	     "[remote \"origin\"]\n\turl = https://github.com/o/r.git\n"
	     "\tfetch = +refs/heads/*:refs/remotes/origin/*\n",
	     1},
	    {"\turl = \"HTTPS://ghp_TOKEN@h.example:8443/r\"\n",
	     "\turl = \"HTTPS://h.example:8443/r\"\n", 1},
	    {"\tpushurl=https://a:b@x/r;c\n", "\tpushurl=https://x/r;c\n", 1},
	    {"[url \"https://x-access-token:T@github.com/\"]\n\tinsteadOf = https://github.com/\n",
	     "[url \"https://github.com/\"]\n\tinsteadOf = https://github.com/\n", 1},
	    {"url = ssh://git:pw@h/r\nurl = ssh://git@h/r\n",
	     "url = ssh://git@h/r\nurl = ssh://git@h/r\n", 1},
	    {"url = git@github.com:o/r.git\nurl = /srv/r.git\nurl = file:///a@b/r\n",
	     "url = git@github.com:o/r.git\nurl = /srv/r.git\nurl = file:///a@b/r\n", 0},
	    {"url = https://h/p?u=a:b@c\n", "url = https://h/p?u=a:b@c\n", 0},
	    /* Spellings git reads as one user:password: quotes inside it, an
	     * escaped character, a line continued with a backslash. */
	    {"url = https://u:TO\"K\"@h/x\n", "url = https://h/x\n", 1},
	    {"url = \"https://u:TO\\\"K@h/x\"\n", "url = \"https://h/x\"\n", 1},
	    {"url = https://user:TOK_B\\\n2@github.com/r\n", "url = https://github.com/r\n", 1},
	    {"url = https://user:TOK_B\\\r\n2@github.com/r\n", "url = https://github.com/r\n", 1},
	    /* http.extraHeader values, as CI checkouts persist their token. */
	    {"[http \"https://github.com/\"]\n\textraheader = AUTHORIZATION: basic eC10b2tlbg==\n",
	     "[http \"https://github.com/\"]\n\textraheader = \n", 1},
	    {"[http]extraHeader=Bearer T ; note\r\n[core]\n",
	     "[http]extraHeader= ; note\r\n[core]\n", 1},
	    {"[http]\n\tExtraHeader = \"X-Token: a;b\" # c\n", "[http]\n\tExtraHeader =  # c\n", 1},
	    {"[http]\n extraheader = Authorization: T\\\n2\nx = 1\n",
	     "[http]\n extraheader = \nx = 1\n", 1},
	    {"[http]\n\textraheader =\n\textraheader\n\tx = extraheader = v\n",
	     "[http]\n\textraheader =\n\textraheader\n\tx = extraheader = v\n", 0},
	    /* A password may hold what git keeps in a value: ";"
	     * inside quotes, "'", spaces. A ";" outside quotes starts a
	     * comment, where nothing is a credential to git. */
	    {"url = \"https://u:ab;c d@h/r\"\n", "url = \"https://h/r\"\n", 1},
	    {"url = https://u:ab'cd@h/r\nurl = https://u:a b@h/r\n",
	     "url = https://h/r\nurl = https://h/r\n", 2},
	    {"url = https://h ; me@x\nurl = \"https://h\" # me@x\n",
	     "url = https://h ; me@x\nurl = \"https://h\" # me@x\n", 0},
	    {"url = https://u:T\"K@h/x\"\n", "url = https://\"h/x\"\n", 1},
	    /* A proxy without a scheme, read by git as http://. */
	    {"[http]\n\tproxy = u:p@proxy:3128\n[remote \"o\"]\n\tproxy = \"u:p;x@p:1\"\n",
	     "[http]\n\tproxy = proxy:3128\n[remote \"o\"]\n\tproxy = \"p:1\"\n", 2},
	    {"[http]\n\tproxy = proxy:3128\n\tproxyAuthMethod = u@x\n",
	     "[http]\n\tproxy = proxy:3128\n\tproxyAuthMethod = u@x\n", 0},
	    /* An inline helper that holds the password. */
	    {"[credential]\n\thelper = \"!f() { echo password=T; }; f\"\n\thelper = store\n",
	     "[credential]\n\thelper = \n\thelper = store\n", 1},
	    {"a://@", "a://@", 0},
	    {"://u:p@h", "://u:p@h", 0},
	};
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct strbuf sb = STRBUF_INIT;
		size_t n = git_strip_url_credentials(cases[i].in, strlen(cases[i].in), &sb);
		assert_string_equal(strbuf_str(&sb), cases[i].out);
		assert_int_equal(n, cases[i].changed);
		strbuf_release(&sb);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(git_config_reads_what_git_reads),
	    cmocka_unit_test(git_config_refuses_malformed_lines_after_reporting_the_earlier_ones),
	    cmocka_unit_test(git_config_stops_when_the_callback_asks),
	    cmocka_unit_test(git_strip_url_credentials_removes_only_credentials),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

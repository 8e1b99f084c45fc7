/* modes.c's reading checks with a synthetic source: a torn reading is read
 * again, a source that keeps returning nonsense is disabled with its figures
 * named, and a declined reading (-EAGAIN) never disables anything. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "heapusage/modes.h"
#include "heapusage/probe.h"

/* What the fake source returns, call by call: committed 0 marks an insane
 * reading (used 10 > committed), -EAGAIN a declined one. */
static int script[8];
static int calls;

static int fake_read(struct hp_probe *p, JNIEnv *env, struct hp_mode_reading *r)
{
	(void)p;
	(void)env;
	int what = script[calls < 8 ? calls : 7];
	calls++;
	if (what == -EAGAIN)
		return -EAGAIN;
	r->used = 10;
	r->committed = what ? 100 : 5;
	r->max = 1000;
	r->kind = HP_USAGE_CURRENT;
	return 0;
}

static const struct hp_mode_ops fake = {
	.mode = HP_MODE_MEMORY_USAGE_CALL,
	.needs_jni = false,
	.read = fake_read,
};

static struct hp_probe *probe_with(const int *s, int n)
{
	struct hp_probe *p = calloc(1, sizeof(*p));
	cr_assert(p);
	p->mode_ops[HP_MODE_MEMORY_USAGE_CALL] = &fake;
	for (int i = 0; i < 8; i++)
		script[i] = s[i < n ? i : n - 1];
	calls = 0;
	return p;
}

Test(modes, a_torn_reading_is_read_again)
{
	const int s[] = { 0, 0, 1 };
	struct hp_probe *p = probe_with(s, 3);
	struct hp_mode_reading r;
	cr_assert_eq(hp_mode_read(p, HP_MODE_MEMORY_USAGE_CALL, NULL, &r), 0);
	cr_expect_eq(calls, 3);
	cr_expect_eq(r.committed, 100);
	cr_expect_eq(p->mode_status[HP_MODE_MEMORY_USAGE_CALL], 0, "a torn reading disabled the mode");
	free(p);
}

Test(modes, nonsense_three_times_running_disables_the_source)
{
	const int s[] = { 0 };
	struct hp_probe *p = probe_with(s, 1);
	struct hp_mode_reading r;
	cr_assert_eq(hp_mode_read(p, HP_MODE_MEMORY_USAGE_CALL, NULL, &r), -EBADMSG);
	cr_expect_eq(calls, 3);
	cr_expect_eq(p->mode_status[HP_MODE_MEMORY_USAGE_CALL], -EBADMSG);
	cr_expect(strstr(p->mode_reason[HP_MODE_MEMORY_USAGE_CALL], "insane reading used=10 committed=5 max=1000"),
		  "reason: %s", p->mode_reason[HP_MODE_MEMORY_USAGE_CALL]);
	/* and it is not read again */
	script[0] = script[1] = script[2] = 1;
	calls = 0;
	cr_expect_eq(hp_mode_read(p, HP_MODE_MEMORY_USAGE_CALL, NULL, &r), -ENOTSUP);
	cr_expect_eq(calls, 0);
	free(p);
}

Test(modes, a_declined_reading_is_not_retried_nor_disabling)
{
	const int s[] = { 0, -EAGAIN, 1 };
	struct hp_probe *p = probe_with(s, 3);
	struct hp_mode_reading r;
	cr_assert_eq(hp_mode_read(p, HP_MODE_MEMORY_USAGE_CALL, NULL, &r), -EAGAIN);
	cr_expect_eq(calls, 2);
	cr_expect_eq(p->mode_status[HP_MODE_MEMORY_USAGE_CALL], 0);
	free(p);
}

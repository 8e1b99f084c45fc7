/* SafeFetchN's checks (src/vmstructs/safefetch.c) against stand-ins built
 * here: the same four-byte load and default, and a signal handler that
 * resumes a fault as HotSpot's handle_safefetch does, counted as
 * "libjvm's" code or not. The
 * real one runs in every JDK 21/25 test (test_profiler's virtual-thread
 * suite prints "heap read by SafeFetchN"). */
#include <criterion/criterion.h>
#include <stdbool.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "vmstructs/libjvm.h"
#include "vmstructs/safefetch.h"

/* HotSpot's safefetch_linux_x86_64.S, as bytes, and a look-alike whose
 * default path returns something else. */
__asm__(".text\n"
	".globl test_fetch_impl, test_fetch_cont, test_wrong_impl\n"
	"test_fetch_impl:\n\tmovq (%rdi), %rax\n\tret\n"
	"test_fetch_cont:\n\tmovq %rsi, %rax\n\tret\n"
	"test_wrong_impl:\n\tmovq 8(%rdi), %rax\n\tret\n");
extern char test_fetch_impl[], test_fetch_cont[], test_wrong_impl[];

static void resume_fault(int sig, siginfo_t *info, void *ctx);

/* "libjvm's code": the stand-ins, and the handler when `with_handler`. */
static struct hp_libjvm text_of_this_test(bool with_handler)
{
	struct hp_libjvm jvm;
	memset(&jvm, 0, sizeof(jvm));
	jvm.nexec = with_handler ? 2 : 1;
	jvm.exec[0].start = (uintptr_t)test_fetch_impl;
	jvm.exec[0].end = (uintptr_t)test_wrong_impl + 8;
	jvm.exec[1].start = (uintptr_t)resume_fault;
	jvm.exec[1].end = (uintptr_t)resume_fault + 1;
	return jvm;
}

static void install_handler(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = resume_fault;
	sa.sa_flags = SA_SIGINFO;
	cr_assert_eq(sigaction(SIGSEGV, &sa, NULL), 0);
	cr_assert_eq(sigaction(SIGBUS, &sa, NULL), 0);
}

/* What HotSpot's handler does for a fault at _SafeFetchN_fault. */
static void resume_fault(int sig, siginfo_t *info, void *ctx)
{
	(void)sig, (void)info;
	ucontext_t *uc = ctx;
	if ((uintptr_t)uc->uc_mcontext.gregs[REG_RIP] == (uintptr_t)test_fetch_impl) {
		uc->uc_mcontext.gregs[REG_RIP] = (greg_t)(uintptr_t)test_fetch_cont;
		return;
	}
	signal(SIGSEGV, SIG_DFL);
}

Test(safefetch, refused_unless_the_signal_handlers_are_libjvms)
{
	struct hp_libjvm jvm = text_of_this_test(false);
	struct hp_safefetch s;
	char err[256] = "";
	signal(SIGSEGV, SIG_DFL);
	cr_assert_eq(hp_safefetch_init(&s, &jvm, (uintptr_t)test_fetch_impl, (uintptr_t)test_fetch_impl,
				       (uintptr_t)test_fetch_cont, err, sizeof(err)), -EFAULT);
	cr_expect(strstr(err, "SIGSEGV handler is not HotSpot's"), "%s", err);
	/* a handler that would resume it, but not in libjvm: still refused */
	install_handler();
	cr_assert_eq(hp_safefetch_init(&s, &jvm, (uintptr_t)test_fetch_impl, (uintptr_t)test_fetch_impl,
				       (uintptr_t)test_fetch_cont, err, sizeof(err)), -EFAULT);
	cr_expect_null(s.fetch);
	signal(SIGSEGV, SIG_DFL);
	signal(SIGBUS, SIG_DFL);
}

Test(safefetch, resumed_faults_give_the_default_and_words_read_right)
{
	install_handler();
	struct hp_libjvm jvm = text_of_this_test(true);
	struct hp_safefetch s;
	char err[256] = "";
	cr_assert_eq(hp_safefetch_init(&s, &jvm, (uintptr_t)test_fetch_impl, (uintptr_t)test_fetch_impl,
				       (uintptr_t)test_fetch_cont, err, sizeof(err)), 0, "%s", err);
	cr_assert_not_null(s.fetch);
	void *gone = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert(gone != MAP_FAILED);
	static uintptr_t words[3] = { 7, 0x5afe5afe5afe5afeull, 0 };
	uintptr_t v = 1;
	cr_expect(hp_safefetch_word(&s, (uintptr_t)&words[0], &v) && v == 7);
	cr_expect(hp_safefetch_word(&s, (uintptr_t)&words[1], &v) && v == 0x5afe5afe5afe5afeull,
		  "a word equal to the default is still read");
	cr_expect(hp_safefetch_word(&s, (uintptr_t)&words[2], &v) && v == 0);
	cr_expect(!hp_safefetch_word(&s, (uintptr_t)gone, &v), "an unreadable page");
	munmap(gone, 4096);
	signal(SIGSEGV, SIG_DFL);
}

Test(safefetch, code_that_is_not_the_plain_load_is_refused)
{
	struct hp_libjvm jvm = text_of_this_test(true);
	struct hp_safefetch s;
	char err[256] = "";
	cr_expect_eq(hp_safefetch_init(&s, &jvm, (uintptr_t)test_wrong_impl, (uintptr_t)test_wrong_impl,
				       (uintptr_t)test_fetch_cont, err, sizeof(err)), -ENOEXEC);
	cr_expect(strstr(err, "not the plain load"), "%s", err);
	/* the fault label must be the load itself */
	cr_expect_eq(hp_safefetch_init(&s, &jvm, (uintptr_t)test_fetch_impl, (uintptr_t)test_fetch_cont,
				       (uintptr_t)test_fetch_cont, err, sizeof(err)), -ENOEXEC);
	/* outside libjvm's code */
	static const unsigned char data[8] = { 0x48, 0x8b, 0x07, 0xc3, 0x48, 0x89, 0xf0, 0xc3 };
	cr_expect_eq(hp_safefetch_init(&s, &jvm, (uintptr_t)data, (uintptr_t)data, (uintptr_t)data + 4, err,
				       sizeof(err)), -ENOEXEC);
	cr_expect_eq(hp_safefetch_init(&s, &jvm, 0, 0, 0, err, sizeof(err)), -ENOENT);
	cr_expect_null(s.fetch);
}

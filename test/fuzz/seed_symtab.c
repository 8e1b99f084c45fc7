/* Source of the fuzz_symtab seed corpus: a few LOCAL and GLOBAL symbols
 * of different kinds and sizes, and no libc dependency. */
static int local_data[4] = { 1, 2, 3, 4 };
static char local_bss[32];

__attribute__((noinline, used)) static int local_func(int x)
{
	local_bss[x & 31] = (char)x;
	return local_data[x & 3];
}

int global_data = 7;

int global_func(int x)
{
	return local_func(x) + global_data;
}

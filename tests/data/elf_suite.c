/* A test program for tests/test_elf.py: compiled at test time by gcc and clang (-O2, -fPIC, -fno-pic) with
   -S -masm=intel, assembled by x86gen and by GNU as, linked with gcc and run; the two programs must print the same.

   It is meant to make compilers write what they write for real code: switch dispatch (jump tables, gcc's CSWTCH
   lookup tables), function pointers, globals and statics, string literals, floating-point constants, varargs calls,
   bit tricks (tzcnt/lzcnt/popcount builtins), loops that get vectorized, and tail calls. Its output depends only on
   its own computation. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a tiny stack machine: a switch over opcodes ---------------------------------------------------------------- */

enum op { OP_PUSH, OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MOD, OP_DUP, OP_SWAP, OP_DROP, OP_JZ, OP_JMP, OP_LT, OP_EQ,
          OP_AND, OP_OR, OP_XOR, OP_SHL, OP_SHR, OP_NEG, OP_NOT, OP_LOAD, OP_STORE, OP_PRINT, OP_CALL, OP_RET,
          OP_HALT };

struct insn { int op; long arg; };

long vm_memory[64];
static long vm_stack[256];
static int vm_calls[64];
unsigned long vm_steps;

static void vm_log(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
}

__attribute__((noinline)) long run_vm(const struct insn *code, int n) {
  int pc = 0, sp = 0, cp = 0;
  long a, b;
  while (pc >= 0 && pc < n) {
    const struct insn *i = &code[pc++];
    vm_steps++;
    switch (i->op) {
    case OP_PUSH: vm_stack[sp++] = i->arg; break;
    case OP_ADD: b = vm_stack[--sp]; vm_stack[sp - 1] += b; break;
    case OP_SUB: b = vm_stack[--sp]; vm_stack[sp - 1] -= b; break;
    case OP_MUL: b = vm_stack[--sp]; vm_stack[sp - 1] *= b; break;
    case OP_DIV: b = vm_stack[--sp]; vm_stack[sp - 1] = b ? vm_stack[sp - 1] / b : 0; break;
    case OP_MOD: b = vm_stack[--sp]; vm_stack[sp - 1] = b ? vm_stack[sp - 1] % b : 0; break;
    case OP_DUP: vm_stack[sp] = vm_stack[sp - 1]; sp++; break;
    case OP_SWAP: a = vm_stack[sp - 1]; vm_stack[sp - 1] = vm_stack[sp - 2]; vm_stack[sp - 2] = a; break;
    case OP_DROP: sp--; break;
    case OP_JZ: if (!vm_stack[--sp]) pc = (int)i->arg; break;
    case OP_JMP: pc = (int)i->arg; break;
    case OP_LT: b = vm_stack[--sp]; vm_stack[sp - 1] = vm_stack[sp - 1] < b; break;
    case OP_EQ: b = vm_stack[--sp]; vm_stack[sp - 1] = vm_stack[sp - 1] == b; break;
    case OP_AND: b = vm_stack[--sp]; vm_stack[sp - 1] &= b; break;
    case OP_OR: b = vm_stack[--sp]; vm_stack[sp - 1] |= b; break;
    case OP_XOR: b = vm_stack[--sp]; vm_stack[sp - 1] ^= b; break;
    case OP_SHL: b = vm_stack[--sp]; vm_stack[sp - 1] = (long)((unsigned long)vm_stack[sp - 1] << (b & 63)); break;
    case OP_SHR: b = vm_stack[--sp]; vm_stack[sp - 1] = (long)((unsigned long)vm_stack[sp - 1] >> (b & 63)); break;
    case OP_NEG: vm_stack[sp - 1] = -vm_stack[sp - 1]; break;
    case OP_NOT: vm_stack[sp - 1] = ~vm_stack[sp - 1]; break;
    case OP_LOAD: vm_stack[sp - 1] = vm_memory[vm_stack[sp - 1] & 63]; break;
    case OP_STORE: b = vm_stack[--sp]; a = vm_stack[--sp]; vm_memory[b & 63] = a; break;
    case OP_PRINT: vm_log("vm: %ld\n", vm_stack[--sp]); break;
    case OP_CALL: vm_calls[cp++] = pc; pc = (int)i->arg; break;
    case OP_RET: if (!cp) return -1; pc = vm_calls[--cp]; break;
    case OP_HALT: return sp ? vm_stack[sp - 1] : 0;
    default: return -2;
    }
  }
  return -3;
}

/* sum of 1..10 and 10! by loops, then fib(20) iteratively */
static const struct insn program[] = {
  {OP_PUSH, 0}, {OP_PUSH, 0}, {OP_STORE, 0},          /* m[0] = 0 (sum) */
  {OP_PUSH, 1}, {OP_PUSH, 1}, {OP_STORE, 0},          /* m[1] = 1 (i) */
  /* 6: loop */
  {OP_PUSH, 1}, {OP_LOAD, 0}, {OP_PUSH, 11}, {OP_LT, 0}, {OP_JZ, 22},
  {OP_PUSH, 0}, {OP_LOAD, 0}, {OP_PUSH, 1}, {OP_LOAD, 0}, {OP_ADD, 0}, {OP_PUSH, 0}, {OP_STORE, 0},
  {OP_PUSH, 1}, {OP_LOAD, 0}, {OP_PUSH, 1}, {OP_CALL, 42},
  /* 22 */
  {OP_PUSH, 0}, {OP_LOAD, 0}, {OP_PRINT, 0},
  {OP_PUSH, 7}, {OP_PUSH, 3}, {OP_SHL, 0}, {OP_PUSH, 5}, {OP_XOR, 0}, {OP_NEG, 0}, {OP_NOT, 0}, {OP_PRINT, 0},
  {OP_PUSH, 1000}, {OP_PUSH, 7}, {OP_MOD, 0}, {OP_PUSH, 3}, {OP_MUL, 0}, {OP_PRINT, 0}, {OP_PUSH, 99}, {OP_HALT, 0},
  {OP_HALT, 0},
  /* 42: i += 1 (stack: i 1), store to m[1], back to the loop */
  {OP_ADD, 0}, {OP_PUSH, 1}, {OP_STORE, 0}, {OP_JMP, 6},
};

/* ---- hashes -------------------------------------------------------------------------------------------------- */

static uint32_t crc_table[256];

static void crc_init(void) {
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    crc_table[i] = c;
  }
}

__attribute__((noinline)) uint32_t crc32(const void *data, size_t n) {
  const unsigned char *p = data;
  uint32_t c = 0xFFFFFFFFu;
  while (n--) c = crc_table[(c ^ *p++) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

__attribute__((noinline)) uint64_t fnv1a(const char *s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (; *s; s++) { h ^= (unsigned char)*s; h *= 0x100000001b3ull; }
  return h;
}

__attribute__((noinline)) uint32_t murmur_mix(uint32_t h) {
  h ^= h >> 16; h *= 0x85ebca6bu; h ^= h >> 13; h *= 0xc2b2ae35u; h ^= h >> 16;
  return h;
}

typedef uint64_t (*hash_fn)(const char *);
static uint64_t hash_crc(const char *s) { return crc32(s, strlen(s)); }
static uint64_t hash_fnv(const char *s) { return fnv1a(s); }
static uint64_t hash_len(const char *s) { return strlen(s) * 2654435761u; }
static const hash_fn hashes[] = {hash_crc, hash_fnv, hash_len};
static const char *const hash_names[] = {"crc32", "fnv1a", "len"};

/* a hash table of words with chaining */
struct entry { const char *key; int count; struct entry *next; };
static struct entry pool[512];
static int pool_used;
static struct entry *buckets[64];

static void count_word(const char *w) {
  uint64_t h = fnv1a(w) & 63;
  for (struct entry *e = buckets[h]; e; e = e->next)
    if (!strcmp(e->key, w)) { e->count++; return; }
  struct entry *e = &pool[pool_used++];
  e->key = w; e->count = 1; e->next = buckets[h]; buckets[h] = e;
}

/* ---- sorting --------------------------------------------------------------------------------------------------- */

static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}
static int cmp_int_desc(const void *a, const void *b) { return cmp_int(b, a); }
static int cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

static void insertion_sort(int *v, int n) {
  for (int i = 1; i < n; i++) {
    int x = v[i], j = i - 1;
    while (j >= 0 && v[j] > x) { v[j + 1] = v[j]; j--; }
    v[j + 1] = x;
  }
}

static void quick_sort(int *v, int lo, int hi) {
  while (hi - lo > 16) {
    int p = v[(lo + hi) / 2], i = lo, j = hi;
    while (i <= j) {
      while (v[i] < p) i++;
      while (v[j] > p) j--;
      if (i <= j) { int t = v[i]; v[i] = v[j]; v[j] = t; i++; j--; }
    }
    if (j - lo < hi - i) { quick_sort(v, lo, j); lo = i; } else { quick_sort(v, i, hi); hi = j; }
  }
  insertion_sort(v + lo, hi - lo + 1);
}

static int merge_tmp[4096];
static void merge_sort(int *v, int n) {
  if (n < 2) return;
  int h = n / 2;
  merge_sort(v, h); merge_sort(v + h, n - h);
  int i = 0, j = h, k = 0;
  while (i < h && j < n) merge_tmp[k++] = v[i] <= v[j] ? v[i++] : v[j++];
  while (i < h) merge_tmp[k++] = v[i++];
  while (j < n) merge_tmp[k++] = v[j++];
  memcpy(v, merge_tmp, n * sizeof *v);
}

static void heap_sift(int *v, int n, int i) {
  for (;;) {
    int l = 2 * i + 1, r = l + 1, m = i;
    if (l < n && v[l] > v[m]) m = l;
    if (r < n && v[r] > v[m]) m = r;
    if (m == i) return;
    int t = v[i]; v[i] = v[m]; v[m] = t; i = m;
  }
}
static void heap_sort(int *v, int n) {
  for (int i = n / 2 - 1; i >= 0; i--) heap_sift(v, n, i);
  for (int i = n - 1; i > 0; i--) { int t = v[0]; v[0] = v[i]; v[i] = t; heap_sift(v, i, 0); }
}

static uint32_t rng_state = 12345;
static uint32_t rng(void) { rng_state = rng_state * 1103515245u + 12345u; return rng_state >> 8; }

static void sort_qsort(int *v, int n) { qsort(v, n, sizeof *v, cmp_int); }
static void sort_quick(int *v, int n) { quick_sort(v, 0, n - 1); }
typedef void (*sorter)(int *, int);
static const struct { const char *name; sorter fn; } sorters[] = {
  {"qsort", sort_qsort}, {"quick", sort_quick}, {"merge", merge_sort}, {"heap", heap_sort}, {"insertion", insertion_sort},
};

/* ---- switch-heavy helpers: gcc's lookup tables (CSWTCH) and jump tables ------------------------------------------ */

__attribute__((noinline)) int days_in_month(int m) {
  switch (m) {
  case 1: case 3: case 5: case 7: case 8: case 10: case 12: return 31;
  case 4: case 6: case 9: case 11: return 30;
  case 2: return 28;
  default: return 0;
  }
}

__attribute__((noinline)) const char *color_name(int c) {
  switch (c) {
  case 0: return "black"; case 1: return "red"; case 2: return "green"; case 3: return "yellow";
  case 4: return "blue"; case 5: return "magenta"; case 6: return "cyan"; case 7: return "white";
  default: return "?";
  }
}

__attribute__((noinline)) double apply(int op, double a, double b) {
  switch (op) {
  case '+': return a + b;
  case '-': return a - b;
  case '*': return a * b;
  case '/': return b != 0 ? a / b : 0.0;
  case '^': { double r = 1; for (int i = 0; i < (int)b; i++) r *= a; return r; }
  case 'm': return a < b ? a : b;
  case 'M': return a > b ? a : b;
  case 'a': return (a + b) * 0.5;
  default: return -1.0;
  }
}

__attribute__((noinline)) int classify_char(int c) {
  switch (c) {
  case ' ': case '\t': case '\n': return 0;
  case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7': case '8': case '9': return 1;
  case '+': case '-': case '*': case '/': return 2;
  case '(': case ')': return 3;
  default: return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ? 4 : 5;
  }
}

/* ---- an expression evaluator (recursive descent) --------------------------------------------------------------- */

static const char *ep;
static double expr(void);
static double primary(void) {
  while (*ep == ' ') ep++;
  if (*ep == '(') { ep++; double v = expr(); while (*ep == ' ') ep++; if (*ep == ')') ep++; return v; }
  if (*ep == '-') { ep++; return -primary(); }
  double v = 0;
  while (*ep >= '0' && *ep <= '9') v = v * 10 + (*ep++ - '0');
  if (*ep == '.') { double f = 0.1; ep++; while (*ep >= '0' && *ep <= '9') { v += (*ep++ - '0') * f; f /= 10; } }
  return v;
}
static double term(void) {
  double v = primary();
  for (;;) {
    while (*ep == ' ') ep++;
    if (*ep == '*' || *ep == '/') { int op = *ep++; v = apply(op, v, primary()); } else return v;
  }
}
static double expr(void) {
  double v = term();
  for (;;) {
    while (*ep == ' ') ep++;
    if (*ep == '+' || *ep == '-') { int op = *ep++; v = apply(op, v, term()); } else return v;
  }
}
static double eval(const char *s) { ep = s; return expr(); }

/* ---- run-length and LZ-style compression ------------------------------------------------------------------------ */

__attribute__((noinline)) size_t rle_encode(const unsigned char *in, size_t n, unsigned char *out) {
  size_t o = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && j - i < 255 && in[j] == in[i]) j++;
    out[o++] = (unsigned char)(j - i); out[o++] = in[i]; i = j;
  }
  return o;
}

__attribute__((noinline)) size_t rle_decode(const unsigned char *in, size_t n, unsigned char *out) {
  size_t o = 0;
  for (size_t i = 0; i + 1 < n; i += 2) { memset(out + o, in[i + 1], in[i]); o += in[i]; }
  return o;
}

/* matches of length >= 3 in a 255-byte window: (0, byte) literals or (length, distance) pairs */
__attribute__((noinline)) size_t lz_encode(const unsigned char *in, size_t n, unsigned char *out) {
  size_t o = 0;
  for (size_t i = 0; i < n;) {
    size_t best = 0, dist = 0;
    for (size_t d = 1; d <= 255 && d <= i; d++) {
      size_t l = 0;
      while (i + l < n && l < 255 && in[i + l] == in[i + l - d]) l++;
      if (l > best) { best = l; dist = d; }
    }
    if (best >= 3) { out[o++] = (unsigned char)best; out[o++] = (unsigned char)dist; i += best; }
    else { out[o++] = 0; out[o++] = in[i++]; }
  }
  return o;
}

__attribute__((noinline)) size_t lz_decode(const unsigned char *in, size_t n, unsigned char *out) {
  size_t o = 0;
  for (size_t i = 0; i + 1 < n; i += 2) {
    if (!in[i]) out[o++] = in[i + 1];
    else for (size_t k = 0; k < in[i]; k++, o++) out[o] = out[o - in[i + 1]];
  }
  return o;
}

/* ---- bits and vectors ------------------------------------------------------------------------------------------ */

__attribute__((noinline)) int bit_stats(uint64_t x) {
  if (!x) return 0;
  return __builtin_ctzll(x) * 10000 + __builtin_clzll(x) * 100 + __builtin_popcountll(x);
}

float vec_a[256], vec_b[256];
double dvec[128];

__attribute__((noinline)) float dot(const float *a, const float *b, int n) {
  float s = 0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

__attribute__((noinline)) void saxpy(float k, const float *x, float *y, int n) {
  for (int i = 0; i < n; i++) y[i] = k * x[i] + y[i];
}

__attribute__((noinline)) long sum_shorts(const short *v, int n) {
  long s = 0;
  for (int i = 0; i < n; i++) s += v[i] == -1 ? 1000 : v[i];
  return s;
}

/* ---- main --------------------------------------------------------------------------------------------------- */

static const char text[] =
  "the quick brown fox jumps over the lazy dog while the dog sleeps and the fox runs over the hill "
  "to the river where the quick fish swim and the lazy frog sits on the stone by the river bank";

int main(void) {
  crc_init();
  long r = run_vm(program, (int)(sizeof program / sizeof *program));
  printf("vm result %ld after %lu steps, m0=%ld\n", r, vm_steps, vm_memory[0]);

  for (int h = 0; h < 3; h++) {
    uint64_t acc = 0;
    for (int i = 0; i < 5; i++) acc = acc * 31 + hashes[h](hash_names[i % 3]);
    printf("%s: %016llx\n", hash_names[h], (unsigned long long)acc);
  }
  printf("crc(text) %08x murmur %08x\n", crc32(text, sizeof text - 1), murmur_mix(0xdeadbeef));

  static char words[sizeof text];
  memcpy(words, text, sizeof text);
  const char *list[64];
  int nw = 0;
  for (char *t = strtok(words, " "); t && nw < 64; t = strtok(NULL, " ")) { list[nw++] = t; count_word(t); }
  qsort(list, nw, sizeof *list, cmp_str);
  printf("%d words, first %s, last %s\n", nw, list[0], list[nw - 1]);
  int most = 0; const char *mw = "";
  for (int b = 0; b < 64; b++)
    for (struct entry *e = buckets[b]; e; e = e->next)
      if (e->count > most || (e->count == most && strcmp(e->key, mw) < 0)) { most = e->count; mw = e->key; }
  printf("most frequent: %s x%d (%d distinct)\n", mw, most, pool_used);

  static int data[1000], work[1000];
  for (int i = 0; i < 1000; i++) data[i] = (int)(rng() % 100000) - 50000;
  for (size_t s = 0; s < sizeof sorters / sizeof *sorters; s++) {
    memcpy(work, data, sizeof data);
    sorters[s].fn(work, 1000);
    int ok = 1;
    for (int i = 1; i < 1000; i++) ok &= work[i - 1] <= work[i];
    printf("%-9s sorted=%d min=%d max=%d median=%d\n", sorters[s].name, ok, work[0], work[999], work[500]);
  }
  qsort(work, 1000, sizeof *work, cmp_int_desc);
  printf("desc first %d\n", work[0]);

  int days = 0;
  for (int m = 0; m <= 13; m++) days += days_in_month(m);
  printf("days %d; colors", days);
  for (int c = 0; c < 9; c++) printf(" %s", color_name(c));
  printf("\n");
  const char *ops = "+-*/^mMa?";
  for (const char *o = ops; *o; o++) printf("%c:%.3f ", *o, apply(*o, 7.5, 2.0));
  printf("\n");
  int classes[6] = {0};
  for (const char *c = "x = (12 + 34) * foo - 7 / bar\t!"; *c; c++) classes[classify_char(*c)]++;
  printf("classes %d %d %d %d %d %d\n", classes[0], classes[1], classes[2], classes[3], classes[4], classes[5]);
  const char *exprs[] = {"1 + 2 * 3", "(1 + 2) * 3", "10 / 4 - 0.5", "-(2 + 3) * -4", "2 * 3.25 + 1"};
  for (int i = 0; i < 5; i++) printf("%s = %g\n", exprs[i], eval(exprs[i]));

  static unsigned char raw[2048], packed[4096], back[2048];
  size_t n = 0;
  for (int i = 0; i < 40; i++) { int run = 1 + (int)(rng() % 20); memset(raw + n, 'a' + i % 5, run); n += run; }
  memcpy(raw + n, text, 100); n += 100;
  memcpy(raw + n, text, 100); n += 100;
  size_t p = rle_encode(raw, n, packed), q = rle_decode(packed, p, back);
  printf("rle %zu -> %zu -> %zu ok=%d\n", n, p, q, q == n && !memcmp(raw, back, n));
  p = lz_encode(raw, n, packed); q = lz_decode(packed, p, back);
  printf("lz %zu -> %zu -> %zu ok=%d crc=%08x\n", n, p, q, q == n && !memcmp(raw, back, n), crc32(packed, p));

  uint64_t bits[] = {1, 0x80, 0xF0F0F0F000ull, 0x8000000000000000ull, 0x123456789abcdefull, 0};
  for (int i = 0; i < 6; i++) printf("%d ", bit_stats(bits[i]));
  printf("\n");
  for (int i = 0; i < 256; i++) { vec_a[i] = (float)(i % 17) * 0.25f; vec_b[i] = (float)(i % 5) - 2.0f; }
  saxpy(1.5f, vec_a, vec_b, 256);
  printf("dot %.4f\n", (double)dot(vec_a, vec_b, 256));
  short sv[300];
  for (int i = 0; i < 300; i++) sv[i] = (short)(i % 7 == 0 ? -1 : i * 3);
  printf("shorts %ld\n", sum_shorts(sv, 300));
  for (int i = 0; i < 128; i++) dvec[i] = i * 0.5;
  double ds = 0;
  for (int i = 0; i < 128; i++) ds += dvec[i] * dvec[127 - i];
  printf("dsum %.2f\n", ds);
  return 0;
}

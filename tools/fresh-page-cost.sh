#!/usr/bin/env bash
# What a page of new memory costs on this machine (docs/performance.md#huge-page-heap): a C program maps 64 MiB of
# anonymous memory, writes it once (every 4 KiB page a page fault), writes it again (no faults), and does the same
# with the mapping advised for transparent huge pages (MADV_HUGEPAGE; 2 MiB pages where the kernel gives them), three
# rounds each. On the 2-vCPU VMs we measure on, a new 4 KiB page costs 2-11 µs, and a new huge page 0.4-26 µs per
# 4 KiB: cheap when its block was freed a moment ago (the later rounds), dear when the VM had handed it back to its
# host (free page reporting: docs/performance.md#huge-pages-cold); on bare metal ~0.1-0.3 µs.
# Needs cc.
set -euo pipefail
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/cost.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
static double ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}
int main(void) {
  const size_t n = 64u << 20, huge = 2u << 20;
  for (int advise = 0; advise <= 1; advise++)
    for (int round = 0; round < 3; round++) {
      char *mapped = mmap(NULL, n + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (mapped == MAP_FAILED) { perror("mmap"); return 1; }
      char *p = (char *)(((unsigned long)mapped + huge - 1) & ~(unsigned long)(huge - 1));
      if (advise && madvise(p, n, MADV_HUGEPAGE) != 0) perror("madvise(MADV_HUGEPAGE)");
      double t0 = ms(); memset(p, 1, n); double t1 = ms(); memset(p, 2, n); double t2 = ms();
      printf("%-16s round %d: first write %7.1f ms (%5.2f us per 4 KiB), second write %5.1f ms\n",
             advise ? "MADV_HUGEPAGE" : "4 KiB pages", round, t1 - t0, (t1 - t0) * 1e3 / (n / 4096), t2 - t1);
      munmap(mapped, n + huge);
    }
  return 0;
}
C
cc -O2 -o "$dir/cost" "$dir/cost.c"
echo "transparent huge pages: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo unknown)"
"$dir/cost"
reporting=$(grep -o 'page_reporting[^ ]*' /proc/cmdline 2>/dev/null | tr '\n' ' ' || true)
echo "free page reporting on the kernel command line: ${reporting:-none said}"
echo "tracelab's trace commands time a huge page only where a 4 KiB page costs 8 µs or more" \
  "(TRACELAB_STAGES=1 says the choice)"

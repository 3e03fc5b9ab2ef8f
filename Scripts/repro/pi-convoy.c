// The lock of the Swift runtime's swift::once on Linux (include/swift/Threading/Impl/Linux/ulock.h, Swift 6.3), in C:
// a priority-inheritance futex taken with a compare-and-swap of the caller's thread id, and FUTEX_LOCK_PI /
// FUTEX_UNLOCK_PI when that fails. THREADS threads (8 unless given) take and give it back for SECONDS seconds (3 unless
// given), with a little work between; the program prints how many times a second they took it. No sanitizer, no
// Swift: what this shows of the runtime's once under ThreadSanitizer belongs to the lock (Documentation/Testing.md).
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static int word;
static long taken;
static volatile int stop;

static int thread_id(void) {
    static __thread int tid;
    if (tid == 0) tid = (int)syscall(SYS_gettid);
    return tid;
}
static long futex(int *lock, int op) { return syscall(SYS_futex, lock, op | FUTEX_PRIVATE_FLAG, 0, NULL, NULL, 0); }
static void lock(int *lock) {
    int tid = thread_id();
    do {
        int zero = 0;
        if (__atomic_compare_exchange_n(lock, &zero, tid, 1, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) break;
    } while (futex(lock, FUTEX_LOCK_PI) != 0);
}
static void unlock(int *lock) {
    int tid = thread_id();
    do {
        int expected = tid;
        if (__atomic_compare_exchange_n(lock, &expected, 0, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED)) break;
    } while (futex(lock, FUTEX_UNLOCK_PI) != 0);
}
static void *work(void *unused) {
    while (!stop) {
        lock(&word);
        unlock(&word);
        for (volatile int i = 0; i < 50; i++) {}
        __atomic_add_fetch(&taken, 1, __ATOMIC_RELAXED);
    }
    return unused;
}
int main(int argc, char **argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 8, seconds = argc > 2 ? atoi(argv[2]) : 3;
    pthread_t thread;
    for (int i = 0; i < threads; i++) pthread_create(&thread, NULL, work, NULL);
    sleep(seconds);
    stop = 1;
    printf("%d threads: the lock taken %ld times a second\n", threads, __atomic_load_n(&taken, __ATOMIC_RELAXED) / seconds);
    return 0;
}
